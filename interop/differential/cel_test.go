package differential

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var (
	celSeed  = flag.Uint64("cel-seed", 1, "seed of the CEL selector cases")
	celCases = flag.Int("cel-cases", 5000, "how many CEL selector cases to run")
	celCase  = flag.Int("cel-case", -1, "run only this CEL case number, and print it")
)

// unsupportedCEL are constructs docs/cel.md says hamisim refuses at compile time ("not supported
// by hamisim"); Kubernetes evaluates them. A case using one is a known gap when hamisim refuses
// it with that message, and a disagreement otherwise.
var unsupportedCEL = []string{
	`'%%s'.format([device.attributes["%[1]s"].model]) == 'T4'`,
	`type(device.attributes["%[1]s"].idx) == int`,
	`[3, 1].sortBy(x, -x)[0] == 3`,
	`url('https://example.com').getHost() == 'example.com'`,
	`ip('10.0.0.1').family() == 4`,
	`duration('1s') < duration('2s')`,
}

// TestCELSelectors compares the DRA CEL selectors hamisim evaluates with Kubernetes' (the
// allocator's cel package of k8s.io/dynamic-resource-allocation v0.37.2): each case is one
// ResourceSlice of three devices with int, string, bool and version attributes and a memory
// capacity, and one claim for one device whose selector is a generated expression. Both
// allocators must pick the same device, find none, or fail with an error (a compile or run-time
// error fails the pod's attempt in both).
func TestCELSelectors(t *testing.T) {
	tool := startAllocatorTool(t)
	first, last := caseRange(*celCases, *celCase)
	var disagreements []string
	counts := map[string]int{}
	gaps := 0
	for i := first; i < last; i++ {
		r := rand.New(rand.NewPCG(*celSeed, uint64(i)))
		expr, unsupported := celExpression(r, 3)
		in := celCaseInput(r, expr)
		want := realAllocate(in)
		got := tool.ask(t, i, in)
		if *celCase >= 0 {
			t.Logf("case %d: %s\nkubernetes: %+v\nhamisim: %+v", i, expr, want, got)
		}
		if unsupported && got.kind == "error" && strings.Contains(got.detail, "is not supported by hamisim") {
			gaps++
			continue
		}
		counts[want.kind]++
		if d := compareOutcomes(want, got); d != "" {
			disagreements = append(disagreements, fmt.Sprintf("case %d (-cel-seed %d -cel-case %d) %s: %s", i, *celSeed, i, expr, d))
		}
	}
	fmt.Printf("differential: CEL selectors: %d cases (%d matched a device, %d matched none, %d errors; %d known gaps of docs/cel.md), %d disagreements\n",
		last-first, counts["allocated"], counts["unschedulable"], counts["error"], gaps, len(disagreements))
	failOnDisagreements(t, "hamisim's CEL disagrees with Kubernetes'", disagreements)
}

// celExpression builds a boolean selector of at most `depth` levels; unsupported says whether
// it uses a construct of unsupportedCEL.
func celExpression(r *rand.Rand, depth int) (string, bool) {
	if depth == 0 || r.IntN(3) == 0 {
		return celAtom(r)
	}
	a, ua := celExpression(r, depth-1)
	b, ub := celExpression(r, depth-1)
	switch r.IntN(5) {
	case 0:
		return "(" + a + ") && (" + b + ")", ua || ub
	case 1:
		return "(" + a + ") || (" + b + ")", ua || ub
	case 2:
		return "!(" + a + ")", ua
	case 3:
		c, uc := celExpression(r, depth-1)
		return "(" + a + ") ? (" + b + ") : (" + c + ")", ua || ub || uc
	default:
		return fmt.Sprintf("cel.bind(x, device.attributes[%q], (%s) && x.idx >= %d)", driver, a, r.IntN(3)), ua
	}
}

func celAtom(r *rand.Rand) (string, bool) {
	d := driver
	attr := func(name string) string { return fmt.Sprintf("device.attributes[%q].%s", d, name) }
	ops := []string{"<", "<=", "==", "!=", ">", ">="}
	models := []string{"a100", "h100-sxm", "T4", "l40s"}
	versions := []string{"1.2.3", "2.0.0-rc.1", "1.10.0", "0.9.9"}
	quantities := []string{"16Gi", "40Gi", "40960Mi", "80Gi", "1Ti"}
	if r.IntN(40) == 0 {
		return fmt.Sprintf(unsupportedCEL[r.IntN(len(unsupportedCEL))], d), true
	}
	// Half the atoms are the original grammar, half the widened one (celWideAtom).
	if r.IntN(2) == 0 {
		return celWideAtom(r, attr), false
	}
	switch r.IntN(20) {
	case 0:
		return fmt.Sprintf("%s %s %d", attr("idx"), ops[r.IntN(len(ops))], r.IntN(6)-1), false
	case 1:
		return fmt.Sprintf("%s %s '%s'", attr("model"), pick(r, "==", "!="), models[r.IntN(len(models))]), false
	case 2:
		return fmt.Sprintf("%s.%s('%s')", attr("model"), pick(r, "startsWith", "endsWith", "contains"),
			pick(r, "a", "sxm", "T", "4", "")), false
	case 3:
		return fmt.Sprintf("%s in ['%s', '%s']", attr("model"), models[r.IntN(4)], models[r.IntN(4)]), false
	case 4:
		return pick(r, attr("healthy"), attr("healthy")+" == true", "!"+attr("healthy"), attr("healthy")+" != false"), false
	case 5:
		return fmt.Sprintf("%s.%s(semver('%s'))", attr("driverVersion"), pick(r, "isGreaterThan", "isLessThan"),
			versions[r.IntN(len(versions))]), false
	case 6:
		return fmt.Sprintf("%s.compareTo(semver('%s')) %s 0", attr("driverVersion"), versions[r.IntN(len(versions))],
			ops[r.IntN(len(ops))]), false
	case 7:
		return fmt.Sprintf("%s.%s() == %d", attr("driverVersion"), pick(r, "major", "minor", "patch"), r.IntN(3)), false
	case 8:
		return fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity('%s')) %s 0", d,
			quantities[r.IntN(len(quantities))], ops[r.IntN(len(ops))]), false
	case 9:
		return fmt.Sprintf("device.capacity[%q].memory.%s(quantity('%s'))", d, pick(r, "isGreaterThan", "isLessThan"),
			quantities[r.IntN(len(quantities))]), false
	case 10:
		return fmt.Sprintf("device.capacity[%q].memory == quantity('%s')", d, quantities[r.IntN(len(quantities))]), false
	case 11:
		return pick(r, fmt.Sprintf("has(%s)", attr("optional")), fmt.Sprintf("'optional' in device.attributes[%q]", d)), false
	case 12:
		// A missing attribute is a run-time error in both, unless guarded.
		return pick(r, attr("optional")+" > 1", fmt.Sprintf("has(%s) && %s > 1", attr("optional"), attr("optional"))), false
	case 13:
		return pick(r, fmt.Sprintf("device.driver == '%s'", d), "device.driver.endsWith('.com')", "device.driver != 'x'"), false
	case 14:
		return fmt.Sprintf("%s > %d", pick(r, attr("model")+".size()", "size("+attr("model")+")"), r.IntN(6)), false
	case 15:
		return pick(r, "device.allowMultipleAllocations == false", "device.allowMultipleAllocations"), false
	case 16:
		return "device.attributes['other.io'].x == 1", false
	case 17:
		return pick(r, "isSemver('1.2.3')", "isSemver('v1.2')", "isQuantity('4Gi')", "isQuantity('4 Gi')"), false
	case 18:
		// Run-time type mismatches on dyn attribute values, and a compile-time one.
		return pick(r, attr("model")+" == 3", attr("idx")+" == '1'", attr("model")+" > 3", "device.driver == 1"), false
	default:
		return fmt.Sprintf("%s == quantity('%s')", pick(r, attr("idx"), attr("model")), quantities[r.IntN(len(quantities))]), false
	}
}

// celWideAtom covers what the DRA CEL environment of Kubernetes 1.37 has beyond the original
// grammar: arithmetic on int, uint and double with its overflow and division errors, numbers
// compared across types, conversions, the strings extension, RE2 regular expressions, the
// macros over lists, map literals and the device's maps, size() of maps, the quantity and semver
// libraries' other functions, the lists and sets libraries, and the cost limit.
func celWideAtom(r *rand.Rand, attr func(string) string) string {
	d := driver
	idx, model, ver := attr("idx"), attr("model"), attr("driverVersion")
	mem := fmt.Sprintf("device.capacity[%q].memory", d)
	dom := fmt.Sprintf("device.attributes[%q]", d)
	n := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }
	ops := []string{"<", "<=", "==", "!=", ">", ">="}
	op := func() string { return ops[r.IntN(len(ops))] }
	switch r.IntN(16) {
	case 0: // int arithmetic: overflow, division and modulus by zero
		return pick(r,
			fmt.Sprintf("%s %s %d %s %d", idx, pick(r, "+", "-", "*"), n(-2, 3), op(), n(-2, 6)),
			fmt.Sprintf("%d / %s %s %d", n(-3, 6), pick(r, idx, "("+idx+" - 1)"), op(), n(-2, 3)),
			fmt.Sprintf("%d %% %s %s %d", n(-3, 6), pick(r, idx, "("+idx+" - 2)"), op(), n(-1, 2)),
			fmt.Sprintf("9223372036854775807 - %d + %s > 0", n(0, 2), idx),
			fmt.Sprintf("-9223372036854775808 + %d - %s < 0", n(0, 2), idx),
			fmt.Sprintf("(%s - 2) * 4611686018427387904 %s 0", idx, op()),
			fmt.Sprintf("-9223372036854775808 / (%s - %d) < 0", idx, n(0, 2)),
			fmt.Sprintf("-(%s) %s -%d", idx, op(), n(0, 3)),
			fmt.Sprintf("%s * %s - %s %% 3 %s %d", idx, idx, idx, op(), n(0, 8)))
	case 1: // uint and double arithmetic
		return pick(r,
			fmt.Sprintf("uint(%s) - %du %s %du", idx, n(0, 3), op(), n(0, 2)),
			fmt.Sprintf("uint(%s) * 9223372036854775808u %s 0u", idx, op()),
			fmt.Sprintf("%du / uint(%s) == %du", n(0, 6), idx, n(0, 3)),
			fmt.Sprintf("double(%s) / %s %s %s", idx, pick(r, "0.0", "2.0", "-0.5"), op(), pick(r, "1.0", "0.5", "-1.0")),
			fmt.Sprintf("double(%s) * 1.5 + 0.25 %s 3.25", idx, op()),
			fmt.Sprintf("0.0 / double(%s) %s 1.0", idx, op()),
			fmt.Sprintf("double(%s) / 0.0 == double(%s) / 0.0", idx, idx))
	case 2: // numbers across types: ordering compiles, == of dyn compares values
		return pick(r,
			fmt.Sprintf("%s %s %s", idx, op(), pick(r, "1.5", "2.0", "-0.5", "2u", "0u")),
			fmt.Sprintf("%s == %s", idx, pick(r, "2.0", "2u", "1.0", "3u", "'2'", "null")),
			fmt.Sprintf("uint(%s) %s %d", idx, op(), n(-1, 3)),
			fmt.Sprintf("double(%s) %s %du", idx, op(), n(0, 3)),
			fmt.Sprintf("%s in [1.0, 2.0]", idx),
			fmt.Sprintf("%s in [1u, 3u]", idx),
			pick(r, "1 == 1.0", "1u == 1", "1 + 1u == 2", "2.0 > 1", "1u < 2.5"),
			fmt.Sprintf("%s + 1.0 > 0.0", idx))
	case 3: // conversions
		return pick(r,
			fmt.Sprintf("string(%s) == '%d'", idx, n(0, 3)),
			fmt.Sprintf("int(string(%s) + '%d') > %d", idx, n(0, 9), n(0, 30)),
			fmt.Sprintf("int(%s) == 1", model),
			fmt.Sprintf("string(double(%s) / %s) == '%s'", idx, pick(r, "4.0", "3.0", "1e7", "1e-5"), pick(r, "0.5", "0.25", "1e-07", "2e-07", "0.6666666666666666", "300000")),
			fmt.Sprintf("int(double(%s) * %s) == %d", idx, pick(r, "1.5", "-1.5", "2.9"), n(-4, 5)),
			fmt.Sprintf("uint(%s - %d) >= 0u", idx, n(0, 3)),
			fmt.Sprintf("double('%s') %s double(%s)", pick(r, "1.5", "1e1", "inf", "-Inf", "NaN", "x", " 1"), op(), idx),
			fmt.Sprintf("bool('%s') == %s", pick(r, "true", "T", "0", "yes", "False"), attr("healthy")),
			fmt.Sprintf("dyn(%s) == dyn('%s')", idx, pick(r, "2", "x")))
	case 4: // strings extension
		return pick(r,
			fmt.Sprintf("%s.lowerAscii() == '%s'", model, pick(r, "t4", "a100", "h100-sxm")),
			fmt.Sprintf("%s.upperAscii() %s '%s'", model, pick(r, "==", "<", ">"), pick(r, "T4", "H100-SXM", "L40S")),
			fmt.Sprintf("%s.replace('%s', '%s'%s) == '%s'", model, pick(r, "-", "0", "", "a"), pick(r, "_", "", "-"), pick(r, "", ", 1", ", 0", ", -1"), pick(r, "h100_sxm", "h1-sxm", "T4", "-T-4-")),
			fmt.Sprintf("%s.split('%s'%s).size() %s %d", model, pick(r, "-", "", "0", "x"), pick(r, "", ", 1", ", 0", ", 2", ", -1"), op(), n(0, 4)),
			fmt.Sprintf("%s.split('-')[%d] == '%s'", model, n(0, 1), pick(r, "h100", "sxm", "T4")),
			fmt.Sprintf("%s.indexOf('%s'%s) %s %d", model, pick(r, "0", "", "4", "sx"), pick(r, "", ", 1", ", -1", ", 9", ", 2"), op(), n(-1, 3)),
			fmt.Sprintf("%s.lastIndexOf('%s'%s) %s %d", model, pick(r, "0", "", "4", "a"), pick(r, "", ", 1", ", -1", ", 9", ", 2"), op(), n(-1, 3)),
			fmt.Sprintf("%s.substring(%d%s) == '%s'", model, n(-1, 5), pick(r, "", ", 2", ", 4", ", 9", ", 0"), pick(r, "", "4", "sxm", "00", "1")),
			fmt.Sprintf("%s.charAt(%d) == '%s'", model, n(-1, 4), pick(r, "", "4", "1", "T")),
			fmt.Sprintf("('%s' + %s + '%s').trim() == %s", pick(r, " ", "\t", "\u00a0", "x"), model, pick(r, " ", "\n", ""), model),
			fmt.Sprintf("%s.split('').join('%s') == '%s'", model, pick(r, "", "-"), pick(r, "T-4", "T4", "a-1-0-0")),
			fmt.Sprintf("[%s, 'x'].join(%s) == '%s'", model, pick(r, "", "','"), pick(r, "T4,x", "T4x", "a100,x")),
			fmt.Sprintf("strings.quote(%s) == '\"%s\"'", model, pick(r, "T4", "a100")),
			fmt.Sprintf("size(%s + '%s') > %d", model, pick(r, "é", "", "日本"), n(2, 8)))
	case 5: // RE2
		return pick(r,
			fmt.Sprintf("%s.matches('%s')", model, pick(r, "^[a-z]+[0-9]+$", "(?i)^t4$", "^h\\d+", "sxm$", "^$", "[[:upper:]]", "\\bsxm", "a|T", "^(a|h)1..(-sxm)?$")),
			fmt.Sprintf("matches(%s, '%s')", model, pick(r, "^T", "0+", "x*")),
			fmt.Sprintf("%s.matches('%s')", model, pick(r, "x[", "(?<n>a)", "a{1001}", "\\C")),
			fmt.Sprintf("%s.matches(%s)", model, pick(r, model, "'^' + "+model, "device.driver")),
			fmt.Sprintf("%s.find('%s') == '%s'", model, pick(r, "[0-9]+", "[a-z]", "x"), pick(r, "100", "4", "", "a")),
			fmt.Sprintf("%s.findAll('%s'%s).size() %s %d", model, pick(r, "[0-9]", "[0-9]*", "", "[a-z]+"), pick(r, "", ", 1", ", 0", ", -1"), op(), n(0, 5)))
	case 6: // macros over lists
		return pick(r,
			fmt.Sprintf("[1, 2, 3].exists(x, x == %s)", idx),
			fmt.Sprintf("['a100', 'T4'].exists(m, m == %s)", model),
			fmt.Sprintf("[%d, %d].all(x, %s / x >= 0)", n(-1, 1), n(-1, 1), idx),
			fmt.Sprintf("[%d, %d].exists(x, %s / x > 0)", n(-1, 1), n(-1, 1), idx),
			fmt.Sprintf("[%d, %d, %d].exists_one(x, x %s %s)", n(0, 3), n(0, 3), n(0, 3), op(), idx),
			fmt.Sprintf("[0, 1, 1].exists_one(x, 1 / x > %s)", idx),
			fmt.Sprintf("[1, 2, 3].map(x, x * %s).filter(y, y > %d).size() == %d", idx, n(0, 4), n(0, 3)),
			fmt.Sprintf("[1, 2, 3].map(x, x > %d, x * 2) == [%s]", n(0, 3), pick(r, "4, 6", "6", "", "2, 4, 6")),
			fmt.Sprintf("[1, 2, 3].all(i, v, v > i + %s - 2)", idx),
			fmt.Sprintf("[%s, 2].transformList(i, v, v * i)[1] == %d", idx, n(0, 4)),
			fmt.Sprintf("[1, 2].map(x, [x, %s]).exists(l, l[0] == l[1])", idx),
			fmt.Sprintf("['a', 'b'].map(s, s + %s).exists(s, s.endsWith('4'))", model))
	case 7: // macros over the device's maps
		return pick(r,
			fmt.Sprintf("%s.all(k, k.size() > %d)", dom, n(1, 6)),
			fmt.Sprintf("%s.exists(k, k == '%s')", dom, pick(r, "optional", "idx", "nope")),
			fmt.Sprintf("%s.exists_one(k, k.startsWith('%s'))", dom, pick(r, "o", "i", "d", "m")),
			"device.attributes.all(dm, dm.endsWith('.com'))",
			"device.attributes.exists(dm, dm == 'other.io')",
			fmt.Sprintf("device.capacity[%q].all(k, device.capacity[%q][k].isGreaterThan(quantity('%s')))", d, d, pick(r, "1Gi", "40Gi")),
			fmt.Sprintf("%s.exists(k, v, v == %d)", dom, n(0, 3)),
			fmt.Sprintf("%s.all(k, v, k == 'driverVersion' || v != 'T4')", dom),
			fmt.Sprintf("%s.all(k, v, v != 'T4')", dom),
			fmt.Sprintf("%s.filter(k, k.size() > 4).size() == %d", dom, n(1, 4)),
			fmt.Sprintf("%s.map(k, k.size()).exists(x, x == %d)", dom, n(3, 13)),
			"device.attributes['other.io'].all(k, false)",
			fmt.Sprintf("device.attributes['other.io'].exists(k, v, v == %d)", n(0, 2)))
	case 8: // size of maps and has on them
		return pick(r,
			fmt.Sprintf("%s.size() %s %d", dom, op(), n(4, 6)),
			fmt.Sprintf("size(device.attributes) == %d", n(1, 2)),
			fmt.Sprintf("size(device.capacity[%q]) == 1", d),
			"device.attributes['nope'].size() == 0",
			fmt.Sprintf("'%s' in device.attributes", pick(r, d, "other.io", "nope")),
			fmt.Sprintf("has(device.attributes.%s)", pick(r, "nope", "x")),
			fmt.Sprintf("%s == {'idx': %s}", dom, idx),
			fmt.Sprintf("device.attributes['other.io'] %s {'numa': %d}", pick(r, "==", "!="), n(0, 2)))
	case 9: // map and list literals, indexing
		return pick(r,
			fmt.Sprintf("{'T4': 1, 'a100': 2}[%s] == %d", model, n(1, 2)),
			fmt.Sprintf("%s in {'T4': 1, 'l40s': 2}", model),
			fmt.Sprintf("{'x': %s}.x == %d", idx, n(0, 3)),
			fmt.Sprintf("has({'x': %s}.%s)", idx, pick(r, "x", "y")),
			fmt.Sprintf("{%d: 'a', 2: 'b'}[%s] == 'b'", n(0, 1), idx),
			fmt.Sprintf("[10, 20, 30][%s] == %s", idx, pick(r, "10", "20", "30")),
			fmt.Sprintf("[10, 20, 30][%s]", pick(r, "uint("+idx+")", "double("+idx+")"))+" > 10",
			fmt.Sprintf("{'a': [1, %s]}['a'].size() == 2", idx),
			fmt.Sprintf("[[1], [%s, 2]][1][0] == %d", idx, n(0, 3)),
			fmt.Sprintf("{'a': 1, 'a': %s}.size() == 1", idx))
	case 10: // quantity library
		return pick(r,
			fmt.Sprintf("%s.add(quantity('%s')).compareTo(quantity('%s')) %s 0", mem, pick(r, "1Gi", "512Mi"), pick(r, "41Gi", "17Gi", "81Gi"), op()),
			fmt.Sprintf("%s.sub(%d).isInteger()", mem, n(0, 2)),
			fmt.Sprintf("%s.asInteger() %s %d", mem, op(), int64(40)<<30),
			fmt.Sprintf("%s.sign() == %d", pick(r, mem, mem+".sub("+mem+")", "quantity('-1')"), n(-1, 1)),
			fmt.Sprintf("%s.asApproximateFloat() %s %s", mem, op(), pick(r, "4.294967296e10", "1e10", "1.7179869184e10")),
			fmt.Sprintf("quantity('%s').%s", pick(r, "1.5", "2000m", "1e3", "2.0", "0", "-3", "1Ki", "1.5Ki"), pick(r, "isInteger()", "asInteger() > 0")),
			fmt.Sprintf("quantity('1Gi').add(%s).isGreaterThan(quantity('1Gi'))", idx))
	case 11: // semver library
		return pick(r,
			fmt.Sprintf("semver('%s', true).%s() == %d", pick(r, "v1.2", "01.02.03", "1", "v2.0.0-rc.1", "1.2-rc.1"), pick(r, "major", "minor", "patch"), n(0, 2)),
			fmt.Sprintf("isSemver('%s', %s)", pick(r, "v1.2", "01.02.03", "1.2.3", "1.2-rc.1", "x"), pick(r, "true", "false")),
			fmt.Sprintf("%s.isGreaterThan(semver('%s', true))", ver, pick(r, "1", "v1.5", "0.9")),
			fmt.Sprintf("%s == semver('%s', true)", ver, pick(r, "v1.2.3", "01.10", "1.2.3")))
	case 12: // lists and sets libraries
		return pick(r,
			fmt.Sprintf("sets.contains([1, 2, 3], [%s])", idx),
			fmt.Sprintf("sets.intersects(['a100', 'l40s'], [%s])", model),
			fmt.Sprintf("sets.equivalent([1, 1, 2], [2, %s])", idx),
			fmt.Sprintf("[3, %s, 1].sort()[%d] == %d", idx, n(0, 2), n(0, 3)),
			fmt.Sprintf("[1, %s].max() == %d", idx, n(1, 3)),
			fmt.Sprintf("[%s, 1].min() == %d", idx, n(0, 1)),
			fmt.Sprintf("[%s, 1].sum() == %d", idx, n(1, 4)),
			fmt.Sprintf("[1, 2, 3].slice(%s, %d).size() == %d", idx, n(1, 4), n(0, 2)),
			fmt.Sprintf("lists.range(%s).size() == %d", idx, n(0, 3)),
			fmt.Sprintf("[[1, 2], [%s]].flatten().size() == 3", idx),
			fmt.Sprintf("[1, 1, %s].distinct().size() == %d", idx, n(1, 3)),
			fmt.Sprintf("[1, 2, %s].reverse()[0] == %d", idx, n(0, 3)),
			fmt.Sprintf("[1, %s].isSorted()", idx),
			fmt.Sprintf("[1, 2, 3].%s(%s) == %d", pick(r, "indexOf", "lastIndexOf"), idx, n(-1, 2)),
			fmt.Sprintf("['b', %s].sort()[0] == 'T4'", model),
			"[].sum() == 0")
	case 14: // optional types
		return pick(r,
			fmt.Sprintf("%s.?%s.orValue(%s) == %s", dom, pick(r, "model", "optional", "nope"), pick(r, "'T4'", "1", "''"), pick(r, "'T4'", "1", model)),
			fmt.Sprintf("%s.?%s.hasValue()", dom, pick(r, "optional", "nope", "idx")),
			fmt.Sprintf("%s.?optional.value() > %d", dom, n(0, 1)),
			fmt.Sprintf("%s[?'%s'].orValue(0) == %s", dom, pick(r, "idx", "optional"), idx),
			fmt.Sprintf("device.attributes.?%s.hasValue()", pick(r, "nope", "x")),
			fmt.Sprintf("[1, 2, 3][?%s].orValue(9) == %d", idx, n(1, 9)),
			fmt.Sprintf("optional.ofNonZeroValue(%s).hasValue()", idx),
			fmt.Sprintf("optional.none().or(optional.of(%s)).value() == 2", idx),
			fmt.Sprintf("%s.?model.?x.hasValue()", dom),
			fmt.Sprintf("optional.of(%s) == optional.of(%d)", idx, n(0, 3)))
	case 13: // the cost limit: far below it and (rarely: a second of work each) far past it
		if r.IntN(8) == 0 {
			return fmt.Sprintf("lists.range(2000).all(i, lists.range(600).all(j, i + j >= %s))", idx)
		}
		return pick(r,
			fmt.Sprintf("lists.range(100).all(i, lists.range(50).all(j, i + j >= %s))", idx),
			fmt.Sprintf("lists.range(1000).exists(i, i == 999 + %s)", idx))
	default: // compile errors of the widened grammar
		return pick(r,
			fmt.Sprintf("%s + 1u > 0", pick(r, "1", "2")),
			"[1, 2.0].size() == 2",
			"{'a': 1, 'b': 'c'}.size() == 2",
			fmt.Sprintf("%s.all(x, 1)", "[1]"),
			"[1].map(x, y, z, w) == []",
			fmt.Sprintf("%s.exists(1, true)", dom),
			"1.exists(x, true)",
			fmt.Sprintf("-%s.size() < 0", model),
			"-'a' == 'a'",
			fmt.Sprintf("%s.split(1) == []", model),
			"[1, 2].join() == ''",
			"['a'] + [1] == []")
	}
}

// celCaseInput is one slice of three devices on node-0 and one claim for one device of class
// gpu with the selector.
func celCaseInput(r *rand.Rand, expr string) draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}}
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "cel-slice"},
		Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To("node-0"),
			Pool: resourceapi.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1}},
	}
	models := []string{"a100", "h100-sxm", "T4", "l40s"}
	versions := []string{"1.2.3", "2.0.0-rc.1", "1.10.0", "0.9.9"}
	for i := 0; i < 3; i++ {
		attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"idx":           {IntValue: ptr.To(int64(r.IntN(4)))},
			"model":         {StringValue: ptr.To(models[r.IntN(len(models))])},
			"healthy":       {BoolValue: ptr.To(r.IntN(4) != 0)},
			"driverVersion": {VersionValue: ptr.To(versions[r.IntN(len(versions))])},
		}
		if r.IntN(2) == 0 {
			attrs["optional"] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(r.IntN(3)))}
		}
		if r.IntN(2) == 0 {
			attrs["other.io/numa"] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(r.IntN(2)))}
		}
		slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{
			Name:       fmt.Sprintf("dev-%d", i),
			Attributes: attrs,
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: *resource.NewQuantity(int64(16*(1+r.IntN(5)))<<30, resource.BinarySI)}},
		})
	}
	in.Slices = []*resourceapi.ResourceSlice{slice}
	in.Classes = []*resourceapi.DeviceClass{class("gpu", fmt.Sprintf("device.driver == %q", driver))}
	in.Claims = []*resourceapi.ResourceClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default", UID: types.UID("claim")},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}}}}}}},
	}}
	return in
}
