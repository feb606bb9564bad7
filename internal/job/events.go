package job

// The names of the events of a job's eventlog (RFC 21), in the order a
// job that runs posts them; the one place code names them. Events with
// other names are kept and replayed but move nothing (Apply).
const (
	EventSubmit           = "submit"
	EventValidate         = "validate"
	EventInvalidate       = "invalidate"
	EventDependencyAdd    = "dependency-add"
	EventDependencyRemove = "dependency-remove"
	EventDepend           = "depend"
	EventPriority         = "priority"
	EventUrgency          = "urgency"
	EventAlloc            = "alloc"
	EventStart            = "start"
	EventFinish           = "finish"
	EventRelease          = "release"
	EventFree             = "free"
	EventException        = "exception"
	EventClean            = "clean"
	EventMemo             = "memo"
	// EventJobspecUpdate records an update of the jobspec (RFC 21): its
	// context is the updated keys, as period-delimited jobspec paths, and
	// their new values. The stored jobspec is the updated one.
	EventJobspecUpdate = "jobspec-update"
	// EventResourceUpdate records a change of a running job's R (RFC
	// 21): its context is the new expiration, in seconds since the epoch.
	EventResourceUpdate = "resource-update"
)
