package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

const scramIterations = 4096

// scramServer is the server side of one SCRAM-SHA-256 exchange (RFC 5802/7677)
// as PostgreSQL runs it: the user name comes from the startup message, the
// client's n= is ignored, no channel binding is offered.
type scramServer struct {
	password        string
	salt            []byte
	clientFirstBare string
	serverFirst     string
	nonce           string
	salted          []byte
}

func newSCRAM(password string) *scramServer {
	salt := make([]byte, 16)
	rand.Read(salt)
	return &scramServer{password: password, salt: salt}
}

// first takes client-first-message and returns server-first-message.
func (s *scramServer) first(clientFirst []byte) ([]byte, error) {
	msg := string(clientFirst)
	// gs2-header: "n,," or "y,," (no channel binding); "p=" would require it.
	switch {
	case strings.HasPrefix(msg, "n,"), strings.HasPrefix(msg, "y,"):
	default:
		return nil, errors.New("SCRAM channel binding is not supported")
	}
	parts := strings.SplitN(msg, ",", 3)
	if len(parts) != 3 {
		return nil, errors.New("malformed SCRAM client-first-message")
	}
	s.clientFirstBare = parts[2]
	var cnonce string
	for _, a := range strings.Split(s.clientFirstBare, ",") {
		if strings.HasPrefix(a, "r=") {
			cnonce = a[2:]
		}
	}
	if cnonce == "" {
		return nil, errors.New("SCRAM client nonce missing")
	}
	b := make([]byte, 18)
	rand.Read(b)
	s.nonce = cnonce + base64.RawStdEncoding.EncodeToString(b)
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce, base64.StdEncoding.EncodeToString(s.salt), scramIterations)
	var err error
	s.salted, err = pbkdf2.Key(sha256.New, s.password, s.salt, scramIterations, 32)
	if err != nil {
		return nil, err
	}
	return []byte(s.serverFirst), nil
}

// final checks client-final-message and returns server-final-message.
func (s *scramServer) final(clientFinal []byte) ([]byte, error) {
	msg := string(clientFinal)
	idx := strings.LastIndex(msg, ",p=")
	if idx < 0 {
		return nil, errors.New("SCRAM proof missing")
	}
	withoutProof := msg[:idx]
	proof, err := base64.StdEncoding.DecodeString(msg[idx+3:])
	if err != nil || len(proof) != sha256.Size {
		return nil, errors.New("malformed SCRAM proof")
	}
	var nonce string
	for _, a := range strings.Split(withoutProof, ",") {
		if strings.HasPrefix(a, "r=") {
			nonce = a[2:]
		}
	}
	if nonce != s.nonce {
		return nil, errors.New("SCRAM nonce mismatch")
	}
	clientKey := hmacSHA256(s.salted, []byte("Client Key"))
	stored := sha256.Sum256(clientKey)
	authMessage := s.clientFirstBare + "," + s.serverFirst + "," + withoutProof
	sig := hmacSHA256(stored[:], []byte(authMessage))
	recovered := make([]byte, len(proof))
	for i := range proof {
		recovered[i] = proof[i] ^ sig[i]
	}
	check := sha256.Sum256(recovered)
	if subtle.ConstantTimeCompare(check[:], stored[:]) != 1 {
		return nil, errBadPassword
	}
	serverKey := hmacSHA256(s.salted, []byte("Server Key"))
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacSHA256(serverKey, []byte(authMessage)))), nil
}

var errBadPassword = errors.New("password authentication failed")

func hmacSHA256(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}
