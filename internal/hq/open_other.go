//go:build !unix

package hq

// openNoBlock is zero where FIFOs do not block an open.
const openNoBlock = 0
