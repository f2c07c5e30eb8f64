//go:build !unix

package bench

// kernelVersion is empty where there is no uname.
func kernelVersion() string { return "" }
