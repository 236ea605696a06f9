package wordfreq

import "testing"

func TestCountsEachWord(t *testing.T) {
	got := Count("a b a")
	if got["a"] != 2 || got["b"] != 1 || len(got) != 2 {
		t.Fatalf("Count(%q) = %v", "a b a", got)
	}
}

func TestIgnoresCase(t *testing.T) {
	got := Count("Go go GO")
	if got["go"] != 3 || len(got) != 1 {
		t.Fatalf("Count(%q) = %v", "Go go GO", got)
	}
}

func TestEmpty(t *testing.T) {
	if got := Count(""); len(got) != 0 {
		t.Fatalf("Count(%q) = %v", "", got)
	}
}
