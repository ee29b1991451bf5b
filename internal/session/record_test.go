package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRecordEqualSeesEveryField: record.equal, which the cache uses to
// tell a write it made from one it did not, agrees with reflect.DeepEqual
// on records differing in any one field, so a field added to record and
// not to equal fails here.
func TestRecordEqualSeesEveryField(t *testing.T) {
	full := func() record {
		var r record
		v := reflect.ValueOf(&r).Elem()
		for i := range v.NumField() {
			set(t, v.Field(i), 1)
		}
		return r
	}
	a := full()
	if !a.equal(full()) {
		t.Fatal("a record is not equal to its copy")
	}
	v := reflect.ValueOf(a)
	for i := range v.NumField() {
		b := full()
		set(t, reflect.ValueOf(&b).Elem().Field(i), 2)
		if a.equal(b) != reflect.DeepEqual(a, b) {
			t.Errorf("records differing in %s: equal says %v", v.Type().Field(i).Name, a.equal(b))
		}
	}
	// DeepEqual tells a nil list from an empty one; so does equal.
	b := full()
	a.Legs, b.Legs = nil, []string{}
	if a.equal(b) != reflect.DeepEqual(a, b) {
		t.Error("nil and empty A-leg lists: equal disagrees with DeepEqual")
	}
}

// set gives a record field a value chosen by n.
func set(t *testing.T, f reflect.Value, n int) {
	switch f.Kind() {
	case reflect.String:
		f.SetString(string(rune('a' + n)))
	case reflect.Int, reflect.Int64:
		f.SetInt(int64(n))
	case reflect.Bool:
		f.SetBool(n == 1)
	case reflect.Slice:
		f.Set(reflect.ValueOf([]string{string(rune('a' + n))}))
	default:
		t.Fatalf("record field of kind %s: teach this test and record.equal about it", f.Kind())
	}
}

// TestKeyDerivationIsStable: lineage keys and A-leg tokens are stored and
// compared across restarts and upgrades, so how they are made is a format:
// each is kind:base64url of the first 16 bytes of HMAC-SHA256 under the
// secret over its length-prefixed fields, as computed here independently.
func TestKeyDerivationIsStable(t *testing.T) {
	secret := []byte("stable-secret-0123456789abcdef")
	r := NewResolver(newMemStore(), Options{Secret: secret})
	want := func(prefix string, fields ...string) string {
		m := hmac.New(sha256.New, secret)
		for _, f := range fields {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(len(f)))
			m.Write(n[:])
			m.Write([]byte(f))
		}
		return prefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
	}
	for _, c := range []struct{ got, want string }{
		{r.key(kindHead, "alice", "chain"), want("h:", "h", "alice", "chain")},
		{r.key(kindFinger, "bob", strings.Repeat("long user text ", 400)), want("u:", "u", "bob", strings.Repeat("long user text ", 400))},
		{r.alegKey("alice", "a_1"), want("a:", "token", "alice", "a_1")},
		{r.EpochToken(Ref{Principal: "alice", ALeg: "a_1"}), want("", "token", "alice", "a_1")},
		{r.mac("new", "alice", "s_1", "x"), want("", "new", "alice", "s_1", "x")},
	} {
		if c.got != c.want {
			t.Errorf("key %s, want %s", c.got, c.want)
		}
	}
}

// TestMadeKeys: the keys a resolution made are found by index, inline or
// past the inline ones, and an index never made is not.
func TestMadeKeys(t *testing.T) {
	var m madeKeys
	for i := 0; i < 40; i += 2 {
		m.put(i, fmt.Sprint("k", i))
	}
	for i := range 41 {
		k, ok := m.get(i)
		if want := i%2 == 0 && i < 40; ok != want || ok && k != fmt.Sprint("k", i) {
			t.Errorf("get(%d) = %q, %v", i, k, ok)
		}
	}
}
