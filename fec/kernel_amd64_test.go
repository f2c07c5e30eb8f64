//go:build amd64 && !purego

package fec

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAMD64Dispatch checks that init picked the fastest kernel the CPU
// supports and listed every kernel it can run, so the differential tests
// really cover them.
func TestAMD64Dispatch(t *testing.T) {
	want := []string{}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		want = append(want, "avx512")
	}
	if cpu.X86.HasAVX2 {
		want = append(want, "avx2")
	}
	want = append(want, "klauspost", "portable")
	if len(kernels) != len(want) {
		t.Fatalf("%d kernels listed, want %v", len(kernels), want)
	}
	for i, k := range kernels {
		if k.name != want[i] {
			t.Fatalf("kernel %d is %q, want %q (list %v)", i, k.name, want[i], want)
		}
	}
	if KernelName() != want[0] {
		t.Fatalf("active kernel %q, want %q", KernelName(), want[0])
	}
}
