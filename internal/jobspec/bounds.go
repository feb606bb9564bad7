package jobspec

import (
	"strconv"

	"github.com/fluxq/fluxq/internal/fsd"
)

// CheckBounds refuses a jobspec whose time limit or begin time lies
// beyond fsd's bounds (100 years, 9000-01-01): such a job's expiration
// is past what a job record can encode. It is a check of submission,
// not of Parse, so that a job stored before the bound existed still
// loads; the server runs it on every jobspec submitted, whoever wrote it.
func (j *Jobspec) CheckBounds() error {
	s := &j.Attributes.System
	if err := fsd.CheckDuration(strconv.FormatFloat(s.Duration, 'g', -1, 64), s.Duration); err != nil {
		return errorf("attributes.system", "%v", err)
	}
	for i, d := range s.Dependencies {
		if d.Scheme != "begin-time" {
			continue
		}
		// A value that is no number is the dependency parser's to
		// refuse, in its words.
		if t, err := strconv.ParseFloat(d.Value, 64); err == nil {
			if err := fsd.CheckTime(d.Value, t); err != nil {
				return errorf("attributes.system.dependencies["+strconv.Itoa(i)+"]", "%v", err)
			}
		}
	}
	return nil
}
