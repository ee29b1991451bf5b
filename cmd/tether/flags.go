package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// errHelp: -h / --help was given; the usage is printed and the exit status is 0.
var errHelp = errors.New("help requested")

// parseArgs parses flags, which may come before or after the positional
// arguments, and returns the positional arguments. A positional argument
// may begin with '-' (a capsule's ref is base64url): a word that names no
// flag of fs is one. Everything after "--" is positional. More than maxArgs
// of them is a usage error.
func parseArgs(fs *flag.FlagSet, args []string, maxArgs int) ([]string, error) {
	var pos, flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
		default:
			name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
			f := fs.Lookup(name)
			switch {
			case name == "h" || name == "help":
				flags = append(flags, a)
			case f == nil:
				pos = append(pos, a)
			default:
				flags = append(flags, a)
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
					i++
					flags = append(flags, args[i]) // the flag's value, whatever it looks like
				}
			}
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(pos) > maxArgs {
		return nil, fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), pos[maxArgs])
	}
	return pos, nil
}
