package job

import "testing"

func TestDependencies(t *testing.T) {
	running := &Job{State: Run, Started: true}
	pending := &Job{State: Sched}
	ok := &Job{State: Inactive, Started: true, Result: Completed}
	failed := &Job{State: Inactive, Started: true, Result: Failed}
	canceledEarly := &Job{State: Inactive, Result: Canceled}
	tests := []struct {
		scheme     string
		target     *Job
		met        bool
		impossible bool
	}{
		{AfterStart, pending, false, false},
		{AfterStart, running, true, false},
		{AfterStart, canceledEarly, false, true},
		{AfterAny, running, false, false},
		{AfterAny, failed, true, false},
		{AfterOK, ok, true, false},
		{AfterOK, failed, false, true},
		{AfterOK, running, false, false},
		{AfterNotOK, failed, true, false},
		{AfterNotOK, ok, false, true},
		{AfterOK, nil, false, true},
	}
	for _, tc := range tests {
		d := Dependency{Scheme: tc.scheme, Target: 42}
		met, why := d.Resolve(tc.target)
		if met != tc.met || (why != "") != tc.impossible {
			t.Errorf("%s on %+v: met %v, impossible %q", tc.scheme, tc.target, met, why)
		}
	}
}

func TestDependencyParsing(t *testing.T) {
	d, err := ParseDependency("afterok", "ƒ2UzHM")
	if err != nil || d.Target == 0 {
		t.Fatalf("ParseDependency = %+v, %v", d, err)
	}
	back, err := ParseDescription(d.Description())
	if err != nil || back != d {
		t.Errorf("description round trip: %q -> %+v, %v", d.Description(), back, err)
	}
	// RFC 21's example description.
	b, err := ParseDescription("begin-time=1552594348")
	if err != nil || b.Time != 1552594348 || b.Description() != "begin-time=1552594348" {
		t.Errorf("begin-time = %+v, %v", b, err)
	}
	for _, bad := range [][2]string{{"after", "1"}, {"afterok", "x"}, {"begin-time", "soon"}} {
		if _, err := ParseDependency(bad[0], bad[1]); err == nil {
			t.Errorf("ParseDependency(%q, %q) accepted", bad[0], bad[1])
		}
	}
}
