package tunnelbench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// udpSegmentationFeature is the kernel's name of UDP GSO on a device
// (NETIF_F_GSO_UDP_L4). With it on, a veth passes a QUIC sender's GSO
// send (dozens of datagrams in one buffer) whole to the peer namespace,
// where a drop rule would lose them all at once; off, the sending kernel
// cuts them into datagrams before the veth, and each is drawn alone.
const udpSegmentationFeature = "tx-udp-segmentation"

// The ethtool ioctl's layouts (linux/ethtool.h).
const (
	ethSSFeatures  = 4  // ETH_SS_FEATURES: the string set of feature names
	ethGStringLen  = 32 // ETH_GSTRING_LEN
	ssetInfoHeader = 16 // cmd, reserved, sset_mask
	gstringsHeader = 12 // cmd, string_set, len
	sfeaturesHead  = 8  // cmd, size
)

// ethtoolIfreq is struct ifreq with ifr_data: data is a pointer, so that
// the buffer it points to lives on the heap and stays alive.
type ethtoolIfreq struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte // the rest of the union
}

// disableDeviceFeature turns one offload feature of dev off in the calling
// thread's network namespace, as `ethtool -K dev feature off` does.
func disableDeviceFeature(dev, feature string) error { return setDeviceFeature(dev, feature, false) }

// setDeviceFeature turns one offload feature of dev on or off in the
// calling thread's network namespace, as `ethtool -K dev feature on|off`.
func setDeviceFeature(dev, feature string, on bool) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	names, err := featureNames(fd, dev)
	if err != nil {
		return err
	}
	bit := -1
	for i, n := range names {
		if n == feature {
			bit = i
		}
	}
	if bit < 0 {
		return fmt.Errorf("ethtool %s: no feature %q", dev, feature)
	}
	blocks := (len(names) + 31) / 32
	buf := make([]byte, sfeaturesHead+8*blocks)
	binary.NativeEndian.PutUint32(buf, unix.ETHTOOL_SFEATURES)
	binary.NativeEndian.PutUint32(buf[4:], uint32(blocks))
	// valid marks the one bit to change, requested its new value.
	binary.NativeEndian.PutUint32(buf[sfeaturesHead+8*(bit/32):], 1<<(bit%32))
	state := "off"
	if on {
		binary.NativeEndian.PutUint32(buf[sfeaturesHead+8*(bit/32)+4:], 1<<(bit%32))
		state = "on"
	}
	if err := ethtool(fd, dev, buf); err != nil {
		return fmt.Errorf("ethtool %s: setting %s %s: %w", dev, feature, state, err)
	}
	return nil
}

// featureNames lists dev's feature names in the order of their bits.
func featureNames(fd int, dev string) ([]string, error) {
	info := make([]byte, ssetInfoHeader+4)
	binary.NativeEndian.PutUint32(info, unix.ETHTOOL_GSSET_INFO)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := ethtool(fd, dev, info); err != nil {
		return nil, fmt.Errorf("ethtool %s: feature count: %w", dev, err)
	}
	if binary.NativeEndian.Uint64(info[8:])&(1<<ethSSFeatures) == 0 {
		return nil, fmt.Errorf("ethtool %s: no feature names", dev)
	}
	count := int(binary.NativeEndian.Uint32(info[ssetInfoHeader:]))
	if count <= 0 || count > 1024 {
		return nil, fmt.Errorf("ethtool %s: %d features", dev, count)
	}
	strs := make([]byte, gstringsHeader+count*ethGStringLen)
	binary.NativeEndian.PutUint32(strs, unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(strs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(strs[8:], uint32(count))
	if err := ethtool(fd, dev, strs); err != nil {
		return nil, fmt.Errorf("ethtool %s: feature names: %w", dev, err)
	}
	names := make([]string, count)
	for i := range names {
		s := strs[gstringsHeader+i*ethGStringLen : gstringsHeader+(i+1)*ethGStringLen]
		if end := bytes.IndexByte(s, 0); end >= 0 {
			s = s[:end]
		}
		names[i] = string(s)
	}
	return names, nil
}

// ethtool issues SIOCETHTOOL on dev with buf as the command.
func ethtool(fd int, dev string, buf []byte) error {
	ifr := &ethtoolIfreq{data: unsafe.Pointer(&buf[0])}
	copy(ifr.name[:unix.IFNAMSIZ-1], dev)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}
