package reservation

import "testing"

func TestHasSpares(t *testing.T) {
	var none *State
	if none.HasSpares() {
		t.Error("a nil state has spares")
	}
	st, err := New(Support{}, []string{"a", "b"}, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.HasSpares() {
		t.Error("startup nodes alone: HasSpares")
	}
	st, err = New(Support{}, []string{"a"}, []Node{{Name: "s", Rank: 5}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !st.HasSpares() {
		t.Error("a spare: not HasSpares")
	}
}
