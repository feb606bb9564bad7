package loop

// Turns is how many turns l has committed; read it once Run has returned.
func Turns(l *Loop) int { return l.turns }
