package connectip

// TestPacket builds well-formed IP packets for the package's external
// tests.
var TestPacket = testPacket
