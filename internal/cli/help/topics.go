package help

import "strings"

// Topic is a page of `BIN help TOPIC`: something many commands share that a
// flag's one line cannot explain.
type Topic struct {
	Name    string // the word after `help`
	Summary string // one line, for the list of topics
	// Text is the page below its NAME line: sections whose titles end in
	// ':' at the left margin, bodies indented three spaces, as a command's
	// help is laid out.
	Text string
	bins []string // the binaries that offer it
}

// TopicsFor returns the topics bin offers (fluxq, fluxres or fluxsched),
// in name order; nil for another name.
func TopicsFor(bin string) []Topic {
	var out []Topic
	for _, t := range topics {
		for _, b := range t.bins {
			if b == bin {
				out = append(out, t)
			}
		}
	}
	return out
}

func lookupTopic(topics []Topic, name string) (Topic, bool) {
	for _, t := range topics {
		if strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	return Topic{}, false
}

// topics, in name order. Every statement here is one the code keeps; the
// help tests pin the pages, and the behaviour they describe has its own
// tests where it is implemented.
var topics = []Topic{
	{
		Name:    "constraints",
		Summary: "which nodes a job may use: the --requires query syntax (RFC 31)",
		bins:    []string{"fluxq", "fluxres"},
		Text: `DESCRIPTION:
   A constraint says which nodes a job may run on; it is stored in the
   jobspec as an RFC 31 tree (attributes.system.constraints). --requires
   takes Flux's query syntax and compiles it into that tree, exactly as
   flux submit --requires does. fluxres find takes the same syntax and
   shows what matches. A request that no configured node can ever meet,
   whatever is drained, reserved or running now, is refused at
   submission and nothing is stored: "unsatisfiable request: no node
   satisfies its constraints (...)" (or what it needs that the instance
   lacks: cores, GPUs, nodes). Before fluxsched has first run, the
   resources are not known: the scheduler judges then.

SYNTAX:
   gpu              nodes with the property gpu
   gpu,ssd          both properties (a comma means and)
   ^debug           nodes without the property debug
   host:node[1-2]   nodes named by a hostlist (also hosts:)
   rank:0-3         nodes by rank, an idset (0-3, 1,5, 2-7)
   a b              both terms (a space means and; so does "a and b")
   a or b           either term (also a|b)
   not a            the complement of a term (also -a, e.g. -rank:0)
   (a or b) c       parentheses group; and binds tighter than or

   Node properties come from the config: properties = ["gpu", "ssd"] in
   [[resource.config]], and a named queue's requires = [...] adds its
   own. Several --requires options are and-ed, as several terms are.
   Quote a query that holds spaces, ^, [ ] or ( ) from the shell.

EXAMPLES:
   # Run on a node that has a GPU and local SSD
   $ fluxq submit --requires gpu,ssd ./train

   # Anywhere but the debug nodes, and not on rank 0
   $ fluxq submit --requires '^debug -rank:0' ./sim

   # On node1 or node2 only
   $ fluxq submit -N 1 --requires 'host:node[1-2]' hostname

   # Which nodes a query matches, before submitting
   $ fluxres find 'gpu or bigmem'

SEE ALSO:
   fluxq help queues, fluxres find --help`,
	},
	{
		Name:    "durations",
		Summary: "how to write a duration: FSD (RFC 23), and bare numbers in -t",
		bins:    []string{"fluxq", "fluxres", "fluxsched"},
		Text: `DESCRIPTION:
   Durations are Flux Standard Durations (RFC 23): a non-negative number,
   fractions allowed, with an optional unit.

   ms   milliseconds     30ms
   s    seconds          30s, 0.5s
   m    minutes          10m, 1.5m (90 seconds)
   h    hours            2h
   d    days             1d
   inf  no limit         inf, infinity

   A bare number means seconds (--timeout 10 is ten seconds), except in
   a job's time limit (fluxq submit/run -t, --time-limit), where it means
   minutes, as in Flux: -t 10 is ten minutes, -t 10s ten seconds; -t 0
   and -t inf ask for no limit of the job's own (its queue's default
   duration, if it has one, applies, and its queue's limit still holds).
   In a queue limit or default (the config's duration = "1h"), 0 and inf
   mean no limit. Where a time is relative, a leading + says "from now"
   (--begin-time +30m, reservation extend --time +1h).

   No duration may be longer than 100 years (36525d), and no time later
   than 9000-01-01T00:00:00Z: beyond them a job's end could not be
   recorded, so the option, the config key or the jobspec is refused.

EXAMPLES:
   # Ten minutes, then the job is killed (result TIMEOUT)
   $ fluxq submit -t 10 ./sim
   $ fluxq submit -t 10m ./sim

   # Start no sooner than two hours from now
   $ fluxq submit --begin-time +2h ./nightly

   # Give up on an unreachable instance after a minute and a half
   $ fluxq --timeout 1.5m jobs

SEE ALSO:
   fluxq help queues (limits and defaults)`,
	},
	{
		Name:    "formats",
		Summary: "-o: named formats, Flux's {field:spec} syntax, Go templates, -o help",
		bins:    []string{"fluxq", "fluxres", "fluxsched"},
		Text: `DESCRIPTION:
   The -o (--format) of a listing or a show command takes one of three:

   NAME         a named format: default, long, ...
   {...}        Flux's format syntax, as flux jobs -o takes it
   {{...}}      a Go template over the fields --json prints

   A value with "{{" in it is a Go template; one with "{" or "}" and no
   "{{" is Flux's syntax (where "{{" would be a literal brace: a literal
   brace in that syntax is not available); anything else names a format.
   -o help lists the named formats and every field, with its heading.

   Flux's syntax is Python's str.format with flux jobs' additions, and
   the field names flux jobs uses (id.f58, state_single, contextual_time,
   t_run, exception.type, sched.reason_pending), besides the --json ones:

   {name:<10.10+}       left in 10 columns, cut to 10 ending in "+"
   {ntasks:>6h}         right in 6 columns, "-" when 0 or empty
   {t_run!d:%H:%M}      a time, by a strftime(3) layout; add ::>8 to pad
   {t_run!D}            a time in ISO 8601, 2026-01-02T15:04:05
   {runtime!F}          a duration in FSD: 1.5m
   {runtime!H}          a duration as h:mm:ss
   {x!P}                a fraction as a percentage
   ?:{queue}            the column is left out when empty in every line
   +:{name}             the column is as wide as its widest value
   sort:-t_submit ...   lines sorted on fields (- descending), then the rest

   A header line of the fields' headings comes first, unless -n. Times
   are seconds since the epoch, shown in local time; a field with no
   value yet prints empty; True and False print as in Flux. fluxq info
   and the other show commands print one line and no header.

EXAMPLES:
   # flux jobs' default format, as is
   $ fluxq jobs -o '{id.f58:>12} ?:{queue:<8.8} +:{username:<8} {name:<10.10+} {status_abbrev:>2.2} {ntasks:>6} {nnodes:>6h} {contextual_time!F:>8h} {contextual_info}'

   # When your jobs started, without a header
   $ fluxq jobs -a -n -o '{id.f58:>12} {state:<8} {t_run!d:%H:%M}'

   # The same with a Go template
   $ fluxq jobs -a -n -o '{{.id_f58}} {{.state}} {{time .t_run "15:04"}}'

SEE ALSO:
   fluxq jobs -o help, flux-jobs(1) OUTPUT FORMAT`,
	},
	{
		Name:    "ids",
		Summary: "how job IDs are written: F58, decimal, hex, dotted hex, words (RFC 19)",
		bins:    []string{"fluxq", "fluxres"},
		Text: `DESCRIPTION:
   A job ID is a 64-bit FLUID (RFC 19): it grows with submit time, so IDs
   sort in submission order. fluxq prints IDs in F58, a base-58 form with
   the prefix ƒ (f when FLUXQ_F58_FORCE_ASCII=1 is set). Every command
   that takes a job ID accepts any of:

   F58          ƒNH or fNH          what fluxq prints
   decimal      1234                what --json prints as "id"
   hex          0x4d2
   dotted hex   0000.0000.0000.04d2 four groups of four hex digits
   words        six mnemonic words joined by -, as flux job id prints

   All the forms above name the same job. Reservation IDs (r1, r2, ...)
   are not job IDs; fluxres reservation list shows them.

EXAMPLES:
   # The same job, three ways
   $ fluxq info ƒNH
   $ fluxq info fNH
   $ fluxq info 1234

   # Job IDs for a script: decimal, one per line
   $ fluxq jobs -a -n -o '{{.id}}'

   # ASCII IDs, for a terminal or file that mangles ƒ
   $ FLUXQ_F58_FORCE_ASCII=1 fluxq jobs`,
	},
	{
		Name:    "jobspec",
		Summary: "what a job asks for: jobspec V1, and what submit's options put in it",
		bins:    []string{"fluxq"},
		Text: `DESCRIPTION:
   Every job is a jobspec V1 (RFC 25, RFC 14): what to run, on what
   resources, with which attributes. fluxq submit and run build one from
   their options; --dry-run prints it instead of submitting, and
   --jobspec FILE submits one written by hand (JSON or YAML) as is.
   fluxq info ID jobspec shows a submitted job's.

SHAPE:
   {"version": 1,
    "resources": [{"type": "slot", "label": "task", "count": 4,
                   "with": [{"type": "core", "count": 2}]}],
    "tasks": [{"command": ["./sim", "a"], "slot": "task",
               "count": {"per_slot": 1}}],
    "attributes": {"system": {"duration": 600, "cwd": "/home/me",
                              "environment": {...}, "queue": "batch"}}}

   A slot is what one task gets. With -N, slots sit inside nodes:
   [{"type": "node", "count": 2, "with": [{"type": "slot", ...}]}].

WHAT THE OPTIONS MAKE:
   -n N              slot count: N tasks
   -c N              cores per slot ("core" count)
   -g N              GPUs per slot (a "gpu" entry)
   -N N, -x          a "node" level of count N; exclusive whole nodes
   -t FSD            attributes.system.duration, in seconds (0: none)
   -q NAME           attributes.system.queue
   --job-name NAME   attributes.system.job.name
   --cwd DIR         attributes.system.cwd
   --env RULE ...    attributes.system.environment (the submitter's, by
                     default, after the rules)
   --requires EXPR   attributes.system.constraints (see 'help constraints')
   --dependency URI  attributes.system.dependencies, {"scheme", "value"}
   --begin-time WHEN a "begin-time" dependency
   --output, --error attributes.system.shell.options.output
   --target ID,...   attributes.system.targets
   COMMAND ARGS...   tasks[0].command

   The urgency is not part of the jobspec: it travels with the request
   (--urgency) and changes later with fluxq urgency.

EXAMPLES:
   # See what a submission would ask for, without submitting it
   $ fluxq submit --dry-run -n 4 -c 2 -t 10m ./sim

   # Write a jobspec once, submit it many times
   $ fluxq submit --dry-run -N 2 ./sim > sim.json
   $ fluxq submit --jobspec sim.json

   # The jobspec of a submitted job
   $ fluxq info ƒNH jobspec`,
	},
	{
		Name:    "queues",
		Summary: "named queues (RFC 33): enable/disable vs start/stop, limits, defaults",
		bins:    []string{"fluxq", "fluxsched"},
		Text: `DESCRIPTION:
   Without named queues an instance has one anonymous queue. Named queues
   come from the config, in Flux's format: [queues.NAME] with
   requires = ["property"] (the nodes it may use) or parent = "NAME" (a
   virtual queue on its parent's nodes). A job names its queue with -q;
   without -q it goes to policy.jobspec.defaults.system.queue, which a
   config with several named queues must set (RFC 33); with one named
   queue and no default it is refused: "no queue specified".

TWO SWITCHES:
   enable/disable   whether the queue takes new submissions. A disabled
                    queue refuses jobs ("job submission to debug is
                    disabled: REASON") but runs those it holds.
   start/stop       whether the queue's jobs are scheduled. A stopped
                    queue accepts jobs and keeps them pending; stopping
                    withdraws pending allocations, running jobs go on.

   Named queues start enabled and stopped, as in Flux (fluxq queue start
   --all opens them); the anonymous queue starts enabled and started. The
   state survives a restart; stop --nocheckpoint lasts only until one.
   Only the instance owner may change it.

LIMITS AND DEFAULTS:
   [policy.limits] (all queues) and [queues.NAME.policy.limits] (one):
   duration = "1h", job-size.max.nnodes / ncores / ngpus / memory, and
   job-size.min.*: a job outside them is refused at submission, with the
   limit in the message (memory = "8G" counts the job's total, slots x
   --mem). [policy.jobspec.defaults.system] duration sets the time limit
   of jobs submitted without -t, memory = "1G" the memory of each slot of
   jobs submitted without --mem. [policy.access]
   allow-user / allow-group say who may submit. Scheduling policy per
   queue: [queues.NAME.policy.scheduler] policy = "easy".

EXAMPLES:
   # Queues, their limits and state; the default carries a *
   $ fluxq queue list

   # Open every named queue for scheduling
   $ fluxq queue start --all

   # Refuse new debug jobs for a while; the queued ones still run
   $ fluxq queue disable -m 'maintenance window' debug

   # Submit to a queue
   $ fluxq submit -q debug -t 5m hostname`,
	},
	{
		Name:    "states",
		Summary: "what a job's state and result mean: DEPEND…INACTIVE, COMPLETED…TIMEOUT",
		bins:    []string{"fluxq"},
		Text: `DESCRIPTION:
   A job walks the RFC 21 states in order; fluxq jobs shows the one-letter
   form under ST, and -f/--filter takes the names.

   DEPEND    D   waiting for its dependencies (--dependency, --begin-time):
                 INFO lists them (depends:afterok=ƒ…, begins 14:05)
   PRIORITY  P   waiting to be given a priority
   SCHED     S   waiting for resources: INFO says why (eta, held,
                 priority-wait, a stopped queue and its reason, the
                 drained nodes it needs and theirs, or the scheduler's
                 reason, naming the reservation it targets)
   RUN       R   running; INFO shows its nodes
   CLEANUP   C   finished or canceled, its resources being released
   INACTIVE      done; the record stays, read-only

   PENDING is DEPEND, PRIORITY and SCHED; RUNNING is RUN and CLEANUP;
   ACTIVE is both. An inactive job has a result, shown under ST:

   COMPLETED  CD  every task exited 0
   FAILED     F   a task exited non-zero, or an exception ended the job
                  (e.g. the scheduler found it can never run here)
   CANCELED   CA  canceled (fluxq cancel) before it ended on its own
   TIMEOUT    TO  killed at the end of its time limit (-t)

   fluxq run, attach and wait exit with the job's own exit code (128+N
   after signal N).

EXAMPLES:
   # Only pending jobs, of every user
   $ fluxq jobs -A -f pending

   # What became of today's jobs
   $ fluxq jobs -a -o '{{.id_f58}} {{.state}} {{.result}}'

   # Counts per state and result
   $ fluxq stats`,
	},
}
