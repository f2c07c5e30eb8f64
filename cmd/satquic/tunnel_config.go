package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

// parseTunnelFlags parses args, then the values of the --config file
// (*config) under them, then checks the whole with check.
func parseTunnelFlags(fs *flag.FlagSet, args []string, config *string, check func() error) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *config != "" {
		if err := applyConfigFile(fs, *config); err != nil {
			return err
		}
	}
	return check()
}

// applyConfigFile sets the flags of fs that the command line left unset
// from the JSON object in path, whose keys are the flags' names: a string,
// number or boolean sets a flag as its text would, and an array sets a
// repeatable flag once per element. Unknown keys, and values of other
// kinds, are errors, so that a misspelt key is not silently ignored.
func applyConfigFile(fs *flag.FlagSet, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: --config: %v", errUsage, err)
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("%w: --config %s: not a JSON object: %v", errUsage, path, err)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil || k == "config" {
			return fmt.Errorf("%w: --config %s: unknown key %q (the keys are the flags' names, without dashes)", errUsage, path, k)
		}
		if flagWasSet(fs, k) {
			continue // the command line overrides the file
		}
		vals, err := configValues(obj[k])
		if err != nil {
			return fmt.Errorf("%w: --config %s: key %q: %v", errUsage, path, k, err)
		}
		for _, v := range vals {
			if err := fs.Set(k, v); err != nil {
				return fmt.Errorf("%w: --config %s: key %q: %v", errUsage, path, k, err)
			}
		}
	}
	return nil
}

// configValues turns a JSON value into the flag texts it stands for.
func configValues(raw json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err == nil {
		out := make([]string, 0, len(list))
		for _, e := range list {
			v, err := configScalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	v, err := configScalar(raw)
	if err != nil {
		return nil, err
	}
	return []string{v}, nil
}

// configScalar turns a JSON string, number or boolean into flag text.
func configScalar(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return fmt.Sprint(b), nil
	}
	return "", fmt.Errorf("want a string, a number, a boolean or an array of them, not %s", strings.TrimSpace(string(raw)))
}
