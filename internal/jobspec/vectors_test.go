package jobspec

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fluxCoreVectors is flux-core's jobspec test corpus (t/jobspec), copied
// into the repository's testdata/jobspec (see its SOURCE.md).
const fluxCoreVectors = "../../testdata/jobspec"

// TestFluxCoreVectors names every file of flux-core's corpus with its
// verdict: "" accepts, anything else is a substring of the rejection. A
// missing file or folder fails: the corpus is part of the repository.
func TestFluxCoreVectors(t *testing.T) {
	const (
		ranges    = "jobspec V1 does not allow count ranges"
		inSlots   = "jobspec V1 does not allow nodes inside slots"
		oneTop    = "jobspec V1 requires exactly one top-level resource"
		noSystem  = "attributes.system is a required key in jobspec V1"
		noDurV1   = "attributes.system.duration is a required key in jobspec V1"
		onlyV1    = "only version 1 jobspec is supported"
		slotTypes = "slot with type must be core, gpu or memory"
	)
	want := map[string]string{
		// valid_v1: every file is accepted.
		"valid_v1/example1.yaml":       "",
		"valid_v1/gpu_count_zero.yaml": "",
		"valid_v1/use_case_1.1.yaml":   "",
		"valid_v1/use_case_2.1.yaml":   "",
		"valid_v1/use_case_2.2.yaml":   "",
		"valid_v1/use_case_2.3.yaml":   "",
		"valid_v1/use_case_2.4.yaml":   "",

		// valid: canonical (RFC 14) jobspecs. V1 ones are accepted, the
		// rest are told what V1 does not allow.
		"valid/attributes_system.yaml": noDurV1,
		"valid/attributes_user.yaml":   noSystem,
		"valid/basic.yaml":             noSystem,
		// flux-core accepts it too: the task's slot name is not matched
		// against the one slot's label.
		"valid/basic_v1.yaml":                       "",
		"valid/example1.yaml":                       "",
		"valid/example2.yaml":                       inSlots,
		"valid/resource_count_string_min_only.yaml": ranges,
		"valid/resource_count_string_range.yaml":    ranges,
		"valid/use_case_1.1.yaml":                   inSlots,
		"valid/use_case_1.10.yaml":                  "unknown resource vertex type 'rack': jobspec V1 allows only node, slot, core and gpu",
		"valid/use_case_1.11.yaml":                  slotTypes + ": jobspec V1 does not allow 'ssd' in a slot",
		"valid/use_case_1.2.yaml":                   ranges,
		"valid/use_case_1.3.yaml":                   ranges,
		"valid/use_case_1.4.yaml":                   inSlots,
		"valid/use_case_1.5.yaml":                   oneTop + ", node or slot (got 2)",
		"valid/use_case_1.6.yaml":                   ranges,
		"valid/use_case_1.7.yaml":                   ranges,
		"valid/use_case_1.8.yaml":                   ranges,
		"valid/use_case_1.9.yaml":                   oneTop,
		"valid/use_case_2.1.yaml":                   inSlots,
		"valid/use_case_2.2.yaml":                   inSlots,
		"valid/use_case_2.3.yaml":                   onlyV1 + " (got version 999)",
		"valid/use_case_2.4.yaml":                   "jobspec V1 allows only one slot under a node (got 2)",
		"valid/use_case_2.5.yaml":                   ranges,
		"valid/use_case_2.6.yaml":                   ranges,
		"valid/use_case_2.7.yaml":                   "jobspec V1 does not allow key 'attributes' in a task",

		"invalid_v1/core_count_invalid.yaml":        "resources[0].with[0].with[0]: slot core count must be >= 1",
		"invalid_v1/duration_missing.yaml":          noDurV1,
		"invalid_v1/gpu_count_invalid.yaml":         "slot gpu count must be >= 0",
		"invalid_v1/node_vertex_missing_count.yaml": "resources[0]: count is a required key for resources",
		"invalid_v1/node_vertex_with_notarray.yaml": "resources[0].with[0]: slot with must be an array",
		// The slot's `with:` is null, which is met before the second child.
		"invalid_v1/node_vertex_with_toomany.yaml": "slot with must be an array",
		"invalid_v1/node_vertex_zero_count.yaml":   "resources[0]: node count must be >= 1",
		"invalid_v1/res_type_unknown.yaml":         "unknown resource vertex type 'smurf'",
		"invalid_v1/slot_node.yaml":                inSlots,
		"invalid_v1/task_count_per_resource.yaml":  "count per_slot or total must be set: jobspec V1 does not allow per_resource",
		"invalid_v1/version_wrong.yaml":            onlyV1 + " (got version 2)",
		"invalid_v1/with_toomany.yaml":             "slot with type must be core, gpu or memory: jobspec V1 does not allow 'smurf' in a slot",
		"invalid_v1/with_whatnow.yaml":             slotTypes + ": jobspec V1 does not allow 'piglets' in a slot",

		"invalid/attributes_bad_entry.yaml":             "unknown attributes section foo",
		"invalid/attributes_not_mapping.yaml":           "attributes must be a mapping",
		"invalid/attributes_null.yaml":                  "attributes must be a mapping",
		"invalid/constraints_not_object.yaml":           "attributes.system.constraints must be a mapping",
		"invalid/dependencies_not_array.yaml":           "attributes.system.dependencies must be a list",
		"invalid/dependency_invalid.yaml":               "attributes.system.dependencies[0]: dependency value must be a string",
		"invalid/invalid_yaml1.yaml":                    "yaml: mapping values are not allowed in this context",
		"invalid/missing_attributes.yaml":               "missing key (attributes)",
		"invalid/missing_resources.yaml":                "missing key (resources)",
		"invalid/missing_tasks.yaml":                    "missing key (tasks)",
		"invalid/missing_version.yaml":                  "missing key (version)",
		"invalid/resource_count_bad_exp_min.yaml":       ranges,
		"invalid/resource_count_bad_mult_operand.yaml":  ranges,
		"invalid/resource_count_bad_operator.yaml":      ranges,
		"invalid/resource_count_bad_type.yaml":          "resources[0]: count must be an integer",
		"invalid/resource_count_is_zero.yaml":           "resources[0]: slot count must be >= 1",
		"invalid/resource_count_max_lessthan_min.yaml":  ranges,
		"invalid/resource_count_min_is_zero.yaml":       ranges,
		"invalid/resource_count_min_not_int.yaml":       ranges,
		"invalid/resource_count_missing_min.yaml":       ranges,
		"invalid/resource_count_missing_operand.yaml":   ranges,
		"invalid/resource_count_missing_operator.yaml":  ranges,
		"invalid/resource_count_negative.yaml":          slotTypes + ": jobspec V1 does not allow 'foo' in a slot",
		"invalid/resource_count_operand_is_zero.yaml":   ranges,
		"invalid/resource_count_operator_not_char.yaml": ranges,
		"invalid/resource_count_scalar_bad_value.yaml":  ranges,
		"invalid/resource_exclusive_invalid.yaml":       "resources[0].with[0]: exclusive must be a boolean",
		"invalid/resource_exclusive_not_scalar.yaml":    "resources[0]: exclusive must be a boolean",
		"invalid/resource_id_not_scalar.yaml":           "jobspec V1 does not allow key 'id' in a resource vertex",
		"invalid/resource_label_not_scalar.yaml":        "resources[0]: label must be a string",
		"invalid/resource_missing_count.yaml":           "resources[0].with[0]: count is a required key for resources",
		"invalid/resource_missing_type.yaml":            "resources[0].with[0]: type is a required key for resources",
		"invalid/resource_node_with_notarray.yaml":      "resources[0]: node with must be an array",
		"invalid/resource_not_mapping.yaml":             "resources[0]: resource must be a mapping",
		"invalid/resource_slot_not_labelled.yaml":       "resources[0]: slots must have labels",
		"invalid/resource_slot_with_notarray.yaml":      "resources[0]: slot with must be an array",
		"invalid/resource_type_not_string.yaml":         "resources[0].with[0]: type must be a string",
		"invalid/resource_unit_not_scalar.yaml":         "resources[0]: unit must be a string",
		"invalid/resources_not_sequence.yaml":           "resources must be a sequence",
		"invalid/task_command_array_notstring.yaml":     "tasks[0]: tasks command array entry must be a string",
		"invalid/task_command_not_array.yaml":           "tasks[0]: tasks command must be an array",
		"invalid/task_command_zero_length_array.yaml":   "tasks[0]: tasks command array length must be >= 1",
		"invalid/task_count_empty.yaml":                 "tasks[0]: count must have exactly one key set",
		"invalid/task_count_not_mapping.yaml":           "tasks[0]: count must be a mapping",
		"invalid/task_count_per_slot_zero.yaml":         "tasks[0]: tasks per_slot count must be >= 1",
		"invalid/task_count_total_and_per_slot.yaml":    "tasks[0]: count must have exactly one key set",
		"invalid/task_count_total_zero.yaml":            "tasks[0]: tasks total count must be >= 1",
		"invalid/task_missing_command.yaml":             "tasks[0]: missing key (command)",
		"invalid/task_missing_count.yaml":               "tasks[0]: missing key (count)",
		"invalid/task_missing_slot.yaml":                "tasks[0]: missing key (slot)",
		"invalid/task_not_mapping.yaml":                 "tasks[0]: task must be a mapping",
		"invalid/tasks_not_sequence.yaml":               "tasks must be a sequence",
		"invalid/version_bad_number.yaml":               "version must be an integer",
		"invalid/version_is_zero.yaml":                  "version must be >= 1",
		"invalid/version_not_scalar.yaml":               "version must be an integer",
	}

	var found []string
	for _, dir := range []string{"valid_v1", "valid", "invalid_v1", "invalid"} {
		entries, err := os.ReadDir(filepath.Join(fluxCoreVectors, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			found = append(found, dir+"/"+e.Name())
		}
	}
	for name := range want {
		if !slices.Contains(found, name) {
			t.Errorf("%s: in the table but not in %s", name, fluxCoreVectors)
		}
	}
	for _, name := range found {
		t.Run(name, func(t *testing.T) {
			wantMsg, ok := want[name]
			if !ok {
				t.Fatalf("new vector %s: add its verdict to the table", name)
			}
			data, err := os.ReadFile(filepath.Join(fluxCoreVectors, name))
			if err != nil {
				t.Fatal(err)
			}
			j, err := Parse(data)
			mustAccept := strings.HasPrefix(name, "valid_v1/")
			mustReject := strings.HasPrefix(name, "invalid")
			switch {
			case wantMsg == "" && err != nil:
				t.Fatalf("Parse: %v, want accepted", err)
			case wantMsg == "":
				if mustReject {
					t.Fatalf("invalid vector accepted")
				}
				checkRoundTrip(t, j)
			case err == nil:
				t.Fatalf("Parse accepted it, want error containing %q", wantMsg)
			case mustAccept:
				t.Fatalf("valid_v1 vector rejected: %v", err)
			case !strings.Contains(err.Error(), wantMsg):
				t.Fatalf("Parse error %q, want it to contain %q", err, wantMsg)
			case strings.HasPrefix(name, "valid/") &&
				!strings.Contains(err.Error(), "V1") && !strings.Contains(err.Error(), "version 1"):
				// A canonical jobspec V1 refuses must be told why.
				t.Fatalf("error %q does not say what V1 does not allow", err)
			}
		})
	}
}

// checkRoundTrip asserts the canonical-form contract: Parse(Marshal(j))
// equals j, and marshals to the same bytes.
func checkRoundTrip(t *testing.T, j *Jobspec) {
	t.Helper()
	b1, err := j.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	j2, err := Parse(b1)
	if err != nil {
		t.Fatalf("Parse(MarshalJSON) = %v\n%s", err, b1)
	}
	if diff := cmp.Diff(j, j2); diff != "" {
		t.Fatalf("Parse(MarshalJSON(j)) differs (-want +got):\n%s", diff)
	}
	b2, err := j2.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON again: %v", err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("MarshalJSON not canonical:\n%s\n%s", b1, b2)
	}
}

// TestRFCExamples parses every example jobspec RFC 14 and RFC 25 print
// (testdata/rfc, see SOURCE.md) with its verdict and, when accepted, the
// counts the RFC's prose describes.
func TestRFCExamples(t *testing.T) {
	d3600 := func(c Counts) Counts { c.Duration = 3600; return c }
	tests := []struct {
		file    string
		wantErr string
		want    Counts
	}{
		// RFC 14 example 1: "4 nodes each of which with 1 task slot of 2
		// cores"; this copy writes the command as a bare string, which
		// flux-core refuses ("tasks command must be an array").
		{file: "spec_14/example1.yaml", wantErr: "tasks[0]: tasks command must be an array"},
		// RFC 14 example 2: one task on each of four nodes, as slot>node.
		{file: "spec_14/example2.yaml", wantErr: "tasks command must be an array"},
		// RFC 14 use case 1.1: request 4 nodes (slot>node).
		{file: "spec_14/use_case_1.1.yaml", wantErr: "jobspec V1 does not allow nodes inside slots"},
		// RFC 14 use case 1.2: between 3 and 30 nodes.
		{file: "spec_14/use_case_1.2.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 1.3: at least 2 sockets and 4 cores per socket.
		{file: "spec_14/use_case_1.3.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 1.4: exclusive nodes with sockets and cores.
		{file: "spec_14/use_case_1.4.yaml", wantErr: "jobspec V1 does not allow nodes inside slots"},
		// RFC 14 use case 1.5: the OAR cluster+switch example.
		{file: "spec_14/use_case_1.5.yaml", wantErr: "jobspec V1 requires exactly one top-level resource, node or slot (got 2)"},
		// RFC 14 use case 1.6: 30 cores on 2 clusters.
		{file: "spec_14/use_case_1.6.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 1.7: 3 cores across 3 switches.
		{file: "spec_14/use_case_1.7.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 2.1: hostname 20 times on 4 nodes, 5 per node.
		{file: "spec_14/use_case_2.1.yaml", wantErr: "tasks command must be an array"},
		// RFC 14 use case 2.2: 5 copies across 4 nodes.
		{file: "spec_14/use_case_2.2.yaml", wantErr: "tasks command must be an array"},
		// RFC 14 use case 2.3: 10 copies, 2 cores each.
		{file: "spec_14/use_case_2.3.yaml", wantErr: "tasks command must be an array"},
		// RFC 14 use case 2.4: read-db and db tasks in one program.
		{file: "spec_14/use_case_2.4.yaml", wantErr: "tasks command must be an array"},
		// RFC 14 use case 2.5: at least 2GB per core.
		{file: "spec_14/use_case_2.5.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 2.6: at least 4GB per node.
		{file: "spec_14/use_case_2.6.yaml", wantErr: "jobspec V1 does not allow count ranges"},
		// RFC 14 use case 2.7: this copy's `[ "flux" "start" ]` is not YAML.
		{file: "spec_14/use_case_2.7.yaml", wantErr: "yaml: line 9: did not find expected ',' or ']'"},
		// RFC 14 use case 2.9: require the amd-mi50 property.
		{file: "spec_14/use_case_2.9.yaml", wantErr: "jobspec V1 does not allow nodes inside slots"},

		// RFC 25 example: 4 nodes, 1 slot of 2 cores each, 4 tasks.
		{file: "spec_25/example1.yaml", want: d3600(Counts{NNodes: 4, NSlots: 4, NCores: 8, NTasks: 4, CoresPerSlot: 2})},
		// RFC 25 use case 1.1: 4 nodes, each with 1 slot.
		{file: "spec_25/use_case_1.1.yaml", want: d3600(Counts{NNodes: 4, NSlots: 4, NCores: 4, NTasks: 4, CoresPerSlot: 1})},
		// RFC 25 use case 2.1: 5 copies of hostname across 4 nodes.
		{file: "spec_25/use_case_2.1.yaml", want: d3600(Counts{NNodes: 4, NSlots: 4, NCores: 4, NTasks: 5, CoresPerSlot: 1})},
		// RFC 25 use case 2.2: 10 copies, 2 cores per copy, 20 cores.
		{file: "spec_25/use_case_2.2.yaml", want: d3600(Counts{NSlots: 10, NCores: 20, NTasks: 10, CoresPerSlot: 2})},
		// RFC 25 use case 2.3: 10 copies, 2 cores and 1 gpu per copy.
		{file: "spec_25/use_case_2.3.yaml", want: d3600(Counts{NSlots: 10, NCores: 20, NGPUs: 10, NTasks: 10, CoresPerSlot: 2, GPUsPerSlot: 1})},
		// RFC 25 use case 2.4: 16 copies across 4 nodes, 1 core + 1 gpu each.
		{file: "spec_25/use_case_2.4.yaml", want: d3600(Counts{NNodes: 4, NSlots: 16, NCores: 16, NGPUs: 16, NTasks: 16, CoresPerSlot: 1, GPUsPerSlot: 1})},
	}
	files, _ := filepath.Glob("testdata/rfc/*/*.yaml")
	if len(files) != len(tests) {
		t.Errorf("testdata/rfc has %d examples, the table %d", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/rfc", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			j, err := Parse(data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, j.Counts()); diff != "" {
				t.Errorf("Counts (-want +got):\n%s", diff)
			}
			checkRoundTrip(t, j)
		})
	}
}
