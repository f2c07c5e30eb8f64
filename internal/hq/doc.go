// Package hq is HTTP/0.9 over QUIC as the QUIC interop runner speaks it
// (ALPN "hq-interop"): the client opens a bidirectional stream per file
// and sends "GET /path\r\n" and a FIN; the server answers with the file's
// bytes and a FIN, or resets the stream with an error code. There are no
// headers, no status and no length: the end of the stream is the end of
// the file.
//
// Server serves one directory, confined with an os.Root: a path never
// leaves it, whether by ".." or by a symbolic link. Get fetches one path
// on a connection. SelfSigned and Fingerprint give a server a
// certificate without a CA, and VerifyPin lets a client trust exactly that
// one.
package hq
