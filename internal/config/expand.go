package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// expandEnv replaces ${NAME} and ${NAME:-default} inside every decoded string
// value of c (never in the YAML text, so a value cannot change the YAML
// around it). A variable that is unset or empty and has no default is an
// error naming the field and the variable, never a value.
func (c *Config) expandEnv(getenv func(string) string) error {
	var errs []error
	expandValue(reflect.ValueOf(c).Elem(), "", getenv, &errs)
	return errors.Join(errs...)
}

func expandValue(v reflect.Value, path string, getenv func(string) string, errs *[]error) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			expandValue(v.Elem(), path, getenv, errs)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !t.Field(i).IsExported() {
				continue
			}
			expandValue(v.Field(i), joinPath(path, name), getenv, errs)
		}
	case reflect.Slice:
		for i := range v.Len() {
			expandValue(v.Index(i), fmt.Sprintf("%s[%d]", path, i), getenv, errs)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String {
			return
		}
		for _, k := range v.MapKeys() {
			s, err := expandString(v.MapIndex(k).String(), getenv)
			if err != nil {
				*errs = append(*errs, fmt.Errorf("%s.%v: %w", path, k, err))
				continue
			}
			v.SetMapIndex(k, reflect.ValueOf(s).Convert(v.Type().Elem()))
		}
	case reflect.String:
		s, err := expandString(v.String(), getenv)
		if err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %w", path, err))
			return
		}
		v.SetString(s)
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// expandString expands the ${…} references of one value.
func expandString(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := envRef.FindStringSubmatch(m)
		v := getenv(sub[1])
		if v == "" {
			if sub[2] == "" {
				missing = append(missing, sub[1])
			}
			v = sub[3]
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set; set it, or give a default as ${%s:-value}", strings.Join(missing, ", "), missing[0])
	}
	return out, nil
}
