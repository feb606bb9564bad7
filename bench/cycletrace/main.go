// Command cycletrace prints the table of docs/architecture.md's "Where a
// short job's time goes" from the marks a build with the tag cycletrace
// wrote into DIR (see internal/cycletrace and bench/cycletrace.sh):
//
//	go run ./bench/cycletrace DIR
package main

import (
	"fmt"
	"os"

	"github.com/fluxq/fluxq/internal/cycletrace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cycletrace DIR")
		os.Exit(2)
	}
	marks, err := cycletrace.Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cycletrace:", err)
		os.Exit(1)
	}
	if len(marks) == 0 {
		fmt.Fprintln(os.Stderr, "cycletrace: no marks in", os.Args[1], "(a build without -tags cycletrace?)")
		os.Exit(1)
	}
	cycletrace.Print(os.Stdout, cycletrace.Table(marks))
}
