package inorder

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

func TestEach(t *testing.T) {
	errWork, errEmit := errors.New("work failed"), errors.New("emit failed")
	for _, tc := range []struct {
		name     string
		n        int
		failWork int // -1: none
		failEmit int // -1: none
		want     []int
		wantErr  error
	}{
		{"none", 0, -1, -1, nil, nil},
		{"one", 1, -1, -1, []int{0}, nil},
		{"many in order", 50, -1, -1, seq(50), nil},
		{"work fails: what came before is emitted", 20, 7, -1, seq(7), errWork},
		{"emit fails: nothing after it", 20, -1, 3, seq(4), errEmit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			err := Each(tc.n, func(i int) (int, error) {
				// Later pieces finish first: the order is Each's, not the workers'.
				time.Sleep(time.Duration(tc.n-i) * 100 * time.Microsecond)
				if i == tc.failWork {
					return 0, errWork
				}
				return i * i, nil
			}, func(i, r int) error {
				if r != i*i {
					t.Errorf("emit(%d, %d): not its own result", i, r)
				}
				got = append(got, i)
				if i == tc.failEmit {
					return errEmit
				}
				return nil
			})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("emitted %v, want %v", got, tc.want)
			}
		})
	}
}

// After an error the workers take no new piece.
func TestEachStopsTheWorkers(t *testing.T) {
	var ran atomic.Int32
	err := Each(10000, func(i int) (int, error) {
		ran.Add(1)
		if i == 0 {
			return 0, errors.New("first fails")
		}
		time.Sleep(time.Millisecond)
		return i, nil
	}, func(int, int) error { return nil })
	if err == nil {
		t.Fatal("no error")
	}
	time.Sleep(50 * time.Millisecond)
	if n := ran.Load(); n > 1000 {
		t.Errorf("%d pieces ran after the first failed", n)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
