package http3

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// fieldOverhead is what RFC 9114 section 4.2.2 adds to each field's name
// and value lengths to size a field section (as HPACK does).
const fieldOverhead = 32

// fieldWriter encodes one field section with QPACK's static table (no
// dynamic table: this endpoint offers none and uses none of the peer's,
// qpack.go) and sizes it as RFC 9114 section 4.2.2 does.
type fieldWriter struct {
	buf  []byte
	size uint64
	// lines are the field lines encoded last, kept with the writer in
	// the pool: the fields of consecutive messages repeat (a client's
	// :authority and :path, a server's content-type, content-length and
	// date), and their Huffman coding cost more than looking them up.
	lines [encodedLines]encodedLine
	next  int // the entry the next miss replaces
}

// encodedLines is how many field lines a fieldWriter keeps, and
// maxEncodedValue the longest value it keeps one for.
const (
	encodedLines    = 8
	maxEncodedValue = 96
)

// isSecretField reports the fields whose values a fieldWriter keeps no
// encoding of: credentials, which then do not outlive their message in
// the pool, nor make the encoding of one connection's message faster for
// having been another's.
func isSecretField(name string) bool {
	switch name {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return false
}

// encodedLine is a field line and its encoding by appendFieldLine.
type encodedLine struct {
	name, value string
	enc         []byte
}

var fieldWriters = sync.Pool{New: func() any { return new(fieldWriter) }}

func getFieldWriter() *fieldWriter {
	w := fieldWriters.Get().(*fieldWriter)
	w.buf = appendFieldSectionPrefix(w.buf[:0])
	w.size = 0
	return w
}

func putFieldWriter(w *fieldWriter) {
	if cap(w.buf) <= 64<<10 {
		fieldWriters.Put(w)
	}
}

// field adds a field whose name is already lowercase.
func (w *fieldWriter) field(name, value string) {
	w.size += uint64(len(name)+len(value)) + fieldOverhead
	if len(value) > maxEncodedValue || isSecretField(name) {
		w.buf = appendFieldLine(w.buf, name, value)
		return
	}
	for i := range w.lines {
		if l := &w.lines[i]; l.value == value && l.name == name && l.enc != nil {
			w.buf = append(w.buf, l.enc...)
			return
		}
	}
	start := len(w.buf)
	w.buf = appendFieldLine(w.buf, name, value)
	l := &w.lines[w.next]
	w.next = (w.next + 1) % encodedLines
	l.name, l.value = name, value
	l.enc = append(l.enc[:0], w.buf[start:]...)
}

// header adds the fields of h with lowercase names, leaving out the
// connection-specific ones HTTP/3 forbids (RFC 9114 section 4.2) and
// those skip names.
func (w *fieldWriter) header(h http.Header, skip func(lower string) bool) {
	for k, vs := range h {
		name := lowerName(k)
		if !validFieldName(name) || isConnectionSpecific(name) || (skip != nil && skip(name)) {
			continue
		}
		for _, v := range vs {
			if name == "te" && !strings.EqualFold(v, "trailers") {
				continue
			}
			w.field(name, v)
		}
	}
}

// frame returns the field section as a HEADERS frame, appended to b.
func (w *fieldWriter) frame(b []byte) []byte {
	return appendHeadersFrame(b, w.buf)
}

// commonNames maps the canonical form of frequent header names to their
// lowercase form without allocating, and canonicalNames the other way,
// for the fields a peer sends: one lookup where http.CanonicalHeaderKey
// would rebuild the name first.
var commonNames, canonicalNames = func() (map[string]string, map[string]string) {
	m, c := map[string]string{}, map[string]string{}
	for _, n := range []string{
		"accept", "accept-encoding", "accept-language", "accept-ranges", "age",
		"authorization", "cache-control", "content-disposition", "content-encoding",
		"content-language", "content-length", "content-range", "content-type", "cookie",
		"date", "etag", "expect", "expires", "host", "if-match", "if-modified-since",
		"if-none-match", "if-range", "if-unmodified-since", "last-modified", "link",
		"location", "origin", "range", "referer", "server", "set-cookie",
		"strict-transport-security", "te", "trailer", "user-agent", "vary",
		"x-content-type-options",
	} {
		m[http.CanonicalHeaderKey(n)] = n
		c[n] = http.CanonicalHeaderKey(n)
	}
	return m, c
}()

// canonicalName is http.CanonicalHeaderKey of a field name.
func canonicalName(name string) string {
	if k, ok := canonicalNames[name]; ok {
		return k
	}
	return http.CanonicalHeaderKey(name)
}

func lowerName(k string) string {
	if n, ok := commonNames[k]; ok {
		return n
	}
	return strings.ToLower(k)
}

// isConnectionSpecific reports the fields HTTP/3 forbids (RFC 9114
// section 4.2); "te" is allowed with the value "trailers" only.
func isConnectionSpecific(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

// tokenChars classes the octets of a token (RFC 9110 section 5.6.2):
// tokenLower for those a field name may hold, tokenUpper for the
// uppercase letters, which RFC 9114 section 4.2 makes a field name's
// malformation but a method or upgrade token may hold.
var tokenChars = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = tokenLower
		t[c-'a'+'A'] = tokenUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = tokenLower
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] = tokenLower
	}
	return t
}()

const (
	tokenLower = 1
	tokenUpper = 2
)

// validFieldName reports a nonempty lowercase token (RFC 9110 section
// 5.1; RFC 9114 section 4.2 makes uppercase malformed).
func validFieldName(name string) bool { return isToken(name, tokenLower) }

// validToken reports a nonempty token of any case: a method (RFC 9110
// section 9.1) or an upgrade token, the form of :protocol (RFC 8441
// section 4, RFC 9110 section 16.7).
func validToken(s string) bool { return isToken(s, tokenLower|tokenUpper) }

func isToken(s string, classes uint8) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if tokenChars[s[i]]&classes == 0 {
			return false
		}
	}
	return true
}

// validFieldValue rejects the characters RFC 9114 section 10.3 names:
// NUL, CR and LF.
func validFieldValue(v string) bool {
	// One pass: a value is short, three searches cost more.
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == 0 || c == '\r' || c == '\n' {
			return false
		}
	}
	return true
}

// decodeFieldSection decodes a QPACK field section whose decoded size may
// not exceed limit: errFieldSectionTooLarge beyond it, a connection
// error QPACK_DECOMPRESSION_FAILED for an encoding this endpoint cannot
// decode (including any reference to a dynamic table it never offered,
// RFC 9204 section 2.2), and a stream error H3_MESSAGE_ERROR for names
// and values HTTP/3 forbids.
func decodeFieldSection(p []byte, limit uint64) ([]headerField, error) {
	return appendFieldSection(nil, p, limit)
}

// appendFieldSection is decodeFieldSection appending the fields to dst,
// so that a caller may decode into room of its own.
func appendFieldSection(dst []headerField, p []byte, limit uint64) ([]headerField, error) {
	fields := dst
	var size uint64
	err := decodeFieldLines(p, func(f headerField) error {
		size += uint64(len(f.Name)+len(f.Value)) + fieldOverhead
		if size > limit {
			return errFieldSectionTooLarge
		}
		name := f.Name
		if f.IsPseudo() {
			name = name[1:]
		}
		if !validFieldName(name) {
			return streamError(ErrCodeMessageError, "invalid field name %q", f.Name)
		}
		if !validFieldValue(f.Value) {
			return streamError(ErrCodeMessageError, "invalid value of field %q", f.Name)
		}
		fields = append(fields, f)
		return nil
	})
	if _, ours := err.(*Error); err == nil || ours || err == errFieldSectionTooLarge {
		if err != nil {
			return nil, err
		}
		return fields, nil
	}
	return nil, connError(ErrCodeQPACKDecompressionFailed, "%v", err)
}

// requestFields are a request's pseudo-header fields and header, and
// room for its URL and for the values of its first regular fields.
type requestFields struct {
	method, scheme, authority, path, protocol string
	header                                    http.Header
	contentLength                             int64
	url                                       url.URL
	// values holds the header's values when there are few enough: the
	// room regularValues would otherwise allocate, a server's allocation
	// per request, kept instead with the stream's state, which lives as
	// long as the request does.
	values [requestValuesInline]string
}

// requestValuesInline is how many regular field values a request keeps
// in its requestFields; most requests carry fewer.
const requestValuesInline = 8

// parseRequestFields checks a request's field section (RFC 9114 section
// 4.3.1) and fills r, which the caller keeps with the stream's state; a
// malformed request is a stream error H3_MESSAGE_ERROR.
func parseRequestFields(fields []headerField, r *requestFields) error {
	*r = requestFields{}
	values := regularValuesIn(fields, r.values[:])
	r.header = make(http.Header, len(values))
	seen := 0
	regular := false
	for _, f := range fields {
		if f.IsPseudo() {
			if regular {
				return streamError(ErrCodeMessageError, "pseudo-header %s after a regular field", f.Name)
			}
			var p *string
			var bit int
			switch f.Name {
			case ":method":
				p, bit = &r.method, 1
			case ":scheme":
				p, bit = &r.scheme, 2
			case ":authority":
				p, bit = &r.authority, 4
			case ":path":
				p, bit = &r.path, 8
			case ":protocol":
				p, bit = &r.protocol, 16
			default:
				return streamError(ErrCodeMessageError, "pseudo-header %s in a request", f.Name)
			}
			if seen&bit != 0 {
				return streamError(ErrCodeMessageError, "pseudo-header %s repeated", f.Name)
			}
			seen |= bit
			*p = f.Value
			continue
		}
		regular = true
		if err := addField(r.header, f, &values); err != nil {
			return err
		}
	}
	if !validToken(r.method) {
		return streamError(ErrCodeMessageError, "missing or invalid :method")
	}
	if r.method == http.MethodConnect && r.protocol == "" {
		// RFC 9114 section 4.4: only :method and :authority.
		if seen&(2|8) != 0 || r.authority == "" {
			return streamError(ErrCodeMessageError, "malformed CONNECT request")
		}
	} else {
		if r.protocol != "" && r.method != http.MethodConnect {
			return streamError(ErrCodeMessageError, ":protocol without CONNECT")
		}
		if r.scheme == "" || r.path == "" {
			return streamError(ErrCodeMessageError, "missing :scheme or :path")
		}
		host := r.header.Get("Host")
		if r.authority == "" {
			r.authority = host
		} else if host != "" && host != r.authority {
			// RFC 9114 section 4.3.1: both present must be equal.
			return streamError(ErrCodeMessageError, ":authority and host differ")
		}
		if (r.scheme == "https" || r.scheme == "http") && r.authority == "" {
			return streamError(ErrCodeMessageError, "missing :authority")
		}
	}
	r.header.Del("Host")
	cl, err := parseContentLength(r.header)
	if err != nil {
		return err
	}
	r.contentLength = cl
	return nil
}

// regularValues returns room for the values of the regular fields among
// fields, which addField hands out a value at a time: one allocation
// for a header rather than one per field, as http.Header.Clone does.
func regularValues(fields []headerField) []string {
	return regularValuesIn(fields, nil)
}

// regularValuesIn is regularValues taking its room from the front of
// inline when it is large enough. Each value addField takes is a slice of
// capacity one, so that no append reaches the next value.
func regularValuesIn(fields []headerField, inline []string) []string {
	n := 0
	for _, f := range fields {
		if !f.IsPseudo() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n <= len(inline) {
		return inline[:n:n]
	}
	return make([]string, n)
}

// addField adds a regular field to h: connection-specific fields make
// the message malformed (RFC 9114 section 4.2), and cookie fields, which
// HTTP/3 may split, are joined again (section 4.2.1). A field new to h
// takes its value's place from the front of *room (regularValues), as
// a slice of capacity one, which a second value of the field outgrows
// without touching the next field's.
func addField(h http.Header, f headerField, room *[]string) error {
	if isConnectionSpecific(f.Name) || (f.Name == "te" && f.Value != "trailers") {
		return streamError(ErrCodeMessageError, "connection-specific field %q", f.Name)
	}
	key := canonicalName(f.Name)
	old := h[key]
	switch {
	case key == "Cookie" && len(old) > 0:
		old[0] += "; " + f.Value
	case len(old) > 0 || len(*room) == 0:
		h[key] = append(old, f.Value)
	default:
		v := (*room)[:1:1]
		*room = (*room)[1:]
		v[0] = f.Value
		h[key] = v
	}
	return nil
}

// parseContentLength returns the content-length of h, or -1 without one;
// invalid or conflicting values make the message malformed (RFC 9114
// section 4.1.2).
func parseContentLength(h http.Header) (int64, error) {
	vs := h["Content-Length"]
	if len(vs) == 0 {
		return -1, nil
	}
	var n int64 = -1
	for _, v := range vs {
		m, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || m < 0 || (n >= 0 && m != n) {
			return 0, streamError(ErrCodeMessageError, "invalid content-length %q", v)
		}
		n = m
	}
	if len(vs) > 1 {
		h["Content-Length"] = vs[:1]
	}
	return n, nil
}

// newServerRequest makes the http.Request of a server from its fields in
// dst, which the caller keeps with the stream's state, with the context
// newContext makes once the fields proved valid. The request is built on
// the stack and copied into dst with its context.
func newServerRequest(dst *http.Request, rf *requestFields, newContext func() context.Context) error {
	req := http.Request{
		Method:        rf.method,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        rf.header,
		ContentLength: rf.contentLength,
		Host:          rf.authority,
	}
	if rf.method == http.MethodConnect && rf.protocol == "" {
		req.URL = &url.URL{Host: rf.authority}
		req.RequestURI = rf.authority
	} else {
		u, err := parseRequestPath(rf.path, &rf.url)
		if err != nil {
			return streamError(ErrCodeMessageError, "invalid :path %q", rf.path)
		}
		req.URL = u
		req.RequestURI = rf.path
		if rf.protocol != "" {
			u.Scheme, u.Host = rf.scheme, rf.authority
			req.Proto = rf.protocol
		}
	}
	declareTrailers(req.Header, &req.Trailer)
	// WithContext, inlined, copies req on the stack: dst is the one
	// place the request takes on the heap.
	*dst = *req.WithContext(newContext())
	return nil
}

// parseRequestPath is url.ParseRequestURI for a request's :path. The
// usual path, an absolute path of characters a path holds unescaped with
// perhaps a query, is parsed here into room, as url.ParseRequestURI
// would parse it (a test holds the two equal); any other goes to
// url.ParseRequestURI, which allocates its result.
func parseRequestPath(p string, room *url.URL) (*url.URL, error) {
	path, query, hasQuery := strings.Cut(p, "?")
	if !plainPath(path) || hasQuery && !plainQuery(query) {
		return url.ParseRequestURI(p)
	}
	*room = url.URL{Path: path, RawQuery: query}
	return room, nil
}

// plainPath reports an absolute path that url.URL keeps as it is: no
// percent-encoding, nothing that EscapedPath would escape (RFC 3986
// section 3.3: unreserved characters, sub-delimiters other than those
// net/url escapes, ':', '@' and '/').
func plainPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-_.~$&+,/:;=@", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// plainQuery reports a nonempty query of visible ASCII characters, which
// url.URL keeps as its RawQuery ("?" alone sets ForceQuery instead).
func plainQuery(q string) bool {
	if q == "" {
		return false
	}
	for i := 0; i < len(q); i++ {
		if q[i] <= ' ' || q[i] >= 0x7f {
			return false
		}
	}
	return true
}

// declareTrailers makes the trailer map hold the names a "Trailer"
// field announces, as net/http does; their values arrive at the end of
// the body.
func declareTrailers(h http.Header, trailer *http.Header) {
	for _, v := range h["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			k = http.CanonicalHeaderKey(strings.TrimSpace(k))
			switch k {
			case "", "Transfer-Encoding", "Trailer", "Content-Length":
				continue
			}
			if *trailer == nil {
				*trailer = make(http.Header)
			}
			(*trailer)[k] = nil
		}
	}
}

// parseResponseFields checks a response's field section (RFC 9114
// section 4.3.2) and returns its status and header.
func parseResponseFields(fields []headerField) (int, http.Header, error) {
	return parseResponseFieldsIn(fields, nil)
}

// parseResponseFieldsIn is parseResponseFields with the header's values
// in inline when they fit (regularValuesIn).
func parseResponseFieldsIn(fields []headerField, inline []string) (int, http.Header, error) {
	values := regularValuesIn(fields, inline)
	h := make(http.Header, len(values))
	status := -1
	regular := false
	for _, f := range fields {
		if f.IsPseudo() {
			if regular || f.Name != ":status" || status >= 0 {
				return 0, nil, streamError(ErrCodeMessageError, "unexpected pseudo-header %s in a response", f.Name)
			}
			n, err := strconv.Atoi(f.Value)
			if err != nil || len(f.Value) != 3 || n < 100 || n > 599 {
				return 0, nil, streamError(ErrCodeMessageError, "invalid :status %q", f.Value)
			}
			status = n
			continue
		}
		regular = true
		if err := addField(h, f, &values); err != nil {
			return 0, nil, err
		}
	}
	if status < 0 {
		return 0, nil, streamError(ErrCodeMessageError, "response without :status")
	}
	return status, h, nil
}

// parseTrailerFields checks a trailer section: no pseudo-headers (RFC
// 9114 section 4.3).
func parseTrailerFields(fields []headerField) (http.Header, error) {
	values := regularValues(fields)
	h := make(http.Header, len(values))
	for _, f := range fields {
		if f.IsPseudo() {
			return nil, streamError(ErrCodeMessageError, "pseudo-header %s in trailers", f.Name)
		}
		if err := addField(h, f, &values); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// maxFieldsOnStack is how many fields a request or response header
// decodes into room on the stack before it takes room on the heap.
const maxFieldsOnStack = 16
