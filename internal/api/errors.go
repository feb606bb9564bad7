package api

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/fluxq/fluxq/internal/job"
	"github.com/fluxq/fluxq/internal/reservation"
)

// Code is the kind of an error, carried over the socket beside its
// message: the client turns it back into an error that errors.Is matches
// against the same sentinel as on the direct path.
type Code string

// The error kinds. An error of no kind (a refused jobspec, a bad queue
// name) has the empty code: it is known by its message only.
const (
	CodeUnknownJob     Code = "unknown-job"
	CodePermission     Code = "permission"
	CodeInactive       Code = "inactive"
	CodeUrgencyRunning Code = "urgency-running"
	CodeNeedsInstance  Code = "needs-instance"
	CodeUnavailable    Code = "unavailable"
	CodeBadRequest     Code = "bad-request"
	// CodeReservation: a reservation request was refused; Status is its
	// PMIx status.
	CodeReservation Code = "reservation"
	// CodeSystem: a system call failed; Errno says which error (ENOSPC:
	// the instance's filesystem is full).
	CodeSystem Code = "system"
	// CodeStoreDamaged: the store file, or a record in it, cannot be
	// read; the message names the file or the job, and what to do.
	CodeStoreDamaged Code = "store-damaged"
)

// Error is an error of a kind. A sentinel (ErrUnknownJob…) is one; an
// error wrapping it keeps its own message. errors.Is(err, sentinel) holds
// for any *Error of the sentinel's code, so an error decoded from the
// socket is the sentinel's kind as the original was.
type Error struct {
	Code    Code   `json:"code,omitempty"`
	Message string `json:"error"`
	Status  int    `json:"status,omitempty"` // PMIx status, CodeReservation only
	Errno   int    `json:"errno,omitempty"`  // CodeSystem only
}

func (e *Error) Error() string { return e.Message }

// Is matches an error of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code
}

// Unwrap gives the system error behind a CodeSystem error, for
// errors.Is(err, syscall.ENOSPC).
func (e *Error) Unwrap() error {
	if e.Code == CodeSystem && e.Errno != 0 {
		return syscall.Errno(e.Errno)
	}
	return nil
}

// Errorf makes an error of kind code.
func Errorf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Sentinels: the kinds a command tells apart. The state package's and the
// client's names for them are these values.
var (
	// ErrUnknownJob: no job has this id (Flux's wording).
	ErrUnknownJob = &Error{Code: CodeUnknownJob, Message: "unknown job id"}
	// ErrPermission: the caller may not do this.
	ErrPermission = &Error{Code: CodePermission, Message: "permission denied"}
	// ErrInactive: the job has ended.
	ErrInactive = &Error{Code: CodeInactive, Message: "job is inactive"}
	// ErrUrgencyRunning: urgency is fixed once resources are allocated.
	ErrUrgencyRunning = &Error{Code: CodeUrgencyRunning, Message: "urgency cannot be changed once resources are allocated"}
	// ErrGuestUrgency: a guest asked for more than the guests' range.
	ErrGuestUrgency = &Error{Code: CodePermission, Message: fmt.Sprintf("permission denied: only the instance owner may set urgency above %d", job.UrgencyGuestMax)}
	// ErrNeedsInstance: reservations are answered by the scheduler, which
	// runs in fluxsched.
	ErrNeedsInstance = &Error{Code: CodeNeedsInstance, Message: "reservation requests are served by the running instance: start fluxsched first"}
	// ErrUnavailable: the instance could not be reached within the
	// timeout (exit 69).
	ErrUnavailable = &Error{Code: CodeUnavailable, Message: "instance unavailable"}
	// ErrOutputLocal: job-output where no exec agent of another machine
	// keeps jobs' output: an instance whose jobs run on its own machine,
	// or the direct path, which has no exec service.
	ErrOutputLocal = &Error{Code: CodeBadRequest, Message: "no exec agent of another machine to read job output from: it is in the job's folder"}
)

// kind is a foreign sentinel given a kind (Classify).
type kind struct {
	err  error
	code Code
}

// kinds are the foreign sentinels given a kind, asked in turn by Encode.
var kinds []kind

// Classify gives errors that are (errors.Is) err the kind code, on the
// wire and on the direct path alike: for a package whose sentinels
// predate this one. It is meant for package initialisation.
func Classify(err error, code Code) { kinds = append(kinds, kind{err, code}) }

// Encode is err as the socket carries it: its whole message, with the kind
// of the first error in its chain that has one.
func Encode(err error) *Error {
	out := &Error{Message: err.Error()}
	var re *reservation.Error
	var ae *Error
	var errno syscall.Errno
	switch {
	case errors.As(err, &re):
		// The message stays the client's to compose (Decode).
		out.Code, out.Status = CodeReservation, int(re.Status)
	case errors.As(err, &ae):
		out.Code, out.Status, out.Errno = ae.Code, ae.Status, ae.Errno
	case errors.As(err, &errno):
		out.Code, out.Errno = CodeSystem, int(errno)
	default:
		for _, k := range kinds {
			if errors.Is(err, k.err) {
				out.Code = k.code
				break
			}
		}
	}
	return out
}

// Decode is the error a command sees for an encoded one: a refused
// reservation request is a *reservation.Error, as the scheduler made it;
// anything else an *Error of the same kind and message.
func Decode(e *Error) error {
	if e.Code == CodeReservation || (e.Code == "" && e.Status != 0) {
		st := reservation.Status(e.Status)
		return &reservation.Error{Status: st, Msg: strings.TrimPrefix(e.Message, st.String()+": ")}
	}
	if e.Code == "" && e.Errno != 0 {
		e.Code = CodeSystem
	}
	return e
}

// Wire is err as it reads after a trip over the socket. The direct path
// returns its errors through it, so both paths return the same errors.
func Wire(err error) error {
	if err == nil {
		return nil
	}
	return Decode(Encode(err))
}
