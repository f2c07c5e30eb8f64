package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func TestLookupStack(t *testing.T) {
	avail := Available()
	if len(avail) < 2 {
		t.Fatalf("available stacks %v, want at least the kernel TCP ones", avail)
	}
	for _, name := range avail {
		s, err := LookupStack(name)
		if err != nil || s.Name() != name {
			t.Errorf("LookupStack(%q) = %v, %v", name, s, err)
		}
	}
	for _, name := range []string{"tcp-vegas", "satquic-fec"} {
		_, err := LookupStack(name)
		if err == nil {
			t.Fatalf("LookupStack(%q) succeeded", name)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "available: "+strings.Join(avail, ", ")) {
			t.Errorf("LookupStack(%q): %q is not one line listing the available stacks", name, msg)
		}
		if _, planned := planned[name]; planned != strings.Contains(msg, "not available yet") {
			t.Errorf("LookupStack(%q): %q", name, msg)
		}
	}
}

type virtualFake struct{ fakeStack }

func (virtualFake) DownloadVirtual(context.Context, netsim.Profile, uint64, int64, time.Duration) (VirtualDownload, error) {
	return VirtualDownload{}, errors.New("not run")
}

func TestCheckVirtual(t *testing.T) {
	tcp, err := LookupStack("tcp-cubic")
	if err != nil {
		t.Fatal(err)
	}
	err = CheckVirtual([]Stack{tcp})
	if err == nil || !strings.Contains(err.Error(), "tcp-cubic runs only in real time") ||
		!strings.Contains(err.Error(), "that run in virtual time: satquic") {
		t.Errorf("CheckVirtual(tcp-cubic) = %v", err)
	}
	if err := CheckVirtual([]Stack{&virtualFake{fakeStack{name: "v"}}}); err != nil {
		t.Errorf("CheckVirtual refused a virtual-time stack: %v", err)
	}
}
