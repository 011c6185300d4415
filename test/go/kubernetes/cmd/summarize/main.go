// Command summarize reads `go test -json` streams (test2json) and prints, per stream, how many
// tests passed, failed and were skipped, then exits 1 if any test failed that is not a known
// failure of that stream.
//
//	summarize [-known file] [-counts file] name=path.json ...
//
// A known-failures file holds lines "<stream> <regexp on the test name> <reason>", separated by
// whitespace (the regexp has none: go test writes a subtest's spaces as _; '#' starts a comment). Only tests that failed without a failed subtest count (a parent fails when a
// child does); each known failure that occurred is printed with its reason, and a known failure
// that no longer occurs is reported (so the list does not go stale) without failing the run.
// -counts writes "<passed> <unexpected failures> <skipped and known failures>" over all streams.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

type event struct {
	Action string
	Test   string
}

type known struct {
	stream string
	re     *regexp.Regexp
	reason string
	seen   bool
	tests  []string // the failed tests it explained
}

func main() {
	knownPath := flag.String("known", "", "known-failures file")
	countsPath := flag.String("counts", "", "where to write the totals")
	flag.Parse()
	knowns, err := readKnown(*knownPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "summarize:", err)
		os.Exit(2)
	}
	var total totals
	for _, arg := range flag.Args() {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "summarize: %q is not name=path\n", arg)
			os.Exit(2)
		}
		if err := summarize(name, path, knowns, &total); err != nil {
			fmt.Fprintln(os.Stderr, "summarize:", err)
			os.Exit(2)
		}
	}
	for _, k := range knowns {
		if !k.seen && streamListed(k.stream, flag.Args()) {
			fmt.Printf("note: known failure %s %s did not occur (remove it?)\n", k.stream, k.re)
		}
	}
	if *countsPath != "" {
		counts := fmt.Sprintf("%d %d %d\n", total.passed, total.unexpected, total.skipped+total.known)
		if err := os.WriteFile(*countsPath, []byte(counts), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "summarize:", err)
			os.Exit(2)
		}
	}
	if total.unexpected > 0 {
		fmt.Printf("%d unexpected failures\n", total.unexpected)
		os.Exit(1)
	}
}

// totals count leaf tests (those without subtests) over every stream.
type totals struct{ passed, unexpected, known, skipped int }

func streamListed(stream string, args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, stream+"=") {
			return true
		}
	}
	return false
}

func readKnown(path string) ([]*known, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*known
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) < 3 {
			return nil, fmt.Errorf("%s:%d: want <stream> <regexp> <reason>", path, i+1)
		}
		re, err := regexp.Compile(parts[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out = append(out, &known{stream: parts[0], re: re, reason: strings.Join(parts[2:], " ")})
	}
	return out, nil
}

// summarize prints one stream's counts and failures and adds them to `total`.
func summarize(name, path string, knowns []*known, total *totals) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	results := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			results[e.Test] = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	counts := map[string]int{}
	var failed []string
	for test, result := range results {
		counts[result]++
		leaf := !hasChild(test, results)
		switch {
		case result == "fail" && !hasFailedChild(test, results):
			failed = append(failed, test)
		case result == "pass" && leaf:
			total.passed++
		case result == "skip" && leaf:
			total.skipped++
		}
	}
	sort.Strings(failed)
	fmt.Printf("%s: %d passed, %d failed, %d skipped (subtests included)\n", name, counts["pass"], counts["fail"], counts["skip"])
	for _, test := range failed {
		if k := match(name, test, knowns); k != nil {
			k.seen = true
			k.tests = append(k.tests, test)
			total.known++
			continue
		}
		total.unexpected++
		fmt.Printf("  FAILED %s\n", test)
	}
	for _, k := range knowns {
		if k.stream == name && len(k.tests) > 0 {
			fmt.Printf("  known failure, %d tests (%s): %s\n", len(k.tests), k.re, k.reason)
		}
	}
	if len(results) == 0 {
		fmt.Printf("  no test ran\n")
		total.unexpected++
	}
	return nil
}

func hasChild(test string, results map[string]string) bool {
	for other := range results {
		if strings.HasPrefix(other, test+"/") {
			return true
		}
	}
	return false
}

func hasFailedChild(test string, results map[string]string) bool {
	for other, result := range results {
		if result == "fail" && strings.HasPrefix(other, test+"/") {
			return true
		}
	}
	return false
}

func match(stream, test string, knowns []*known) *known {
	for _, k := range knowns {
		if k.stream == stream && k.re.MatchString(test) {
			return k
		}
	}
	return nil
}
