package complete

// TableKeys are the commands and options the value tables name, for a
// test that they all exist.
func TableKeys() (commands, options []string) {
	for k := range positional {
		commands = append(commands, k)
	}
	for k := range jobLines {
		commands = append(commands, k)
	}
	for k := range flagValues {
		options = append(options, k)
	}
	return commands, options
}
