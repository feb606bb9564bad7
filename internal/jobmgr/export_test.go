package jobmgr

// VerifyRestore makes every Restore check itself against a full copy.
func VerifyRestore(on bool) { verifyRestore = on }
