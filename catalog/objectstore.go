package catalog

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"gocloud.dev/blob/s3blob"
)

// The s3:// warehouse goes through iceberg-go's blob file IO over a client
// built here rather than iceberg-go's own s3 registration, for one reason: a
// request timeout. iceberg-go bounds only the dial, so an endpoint that accepts
// a connection and then stalls would hang an archival for good.
func init() {
	for _, scheme := range s3Schemes {
		iceio.Register(scheme, openS3)
	}
}

var s3Schemes = []string{"s3", "s3a", "s3n"}

// propRequestTimeout carries S3Settings.RequestTimeout through iceberg-go's
// catalog properties to openS3.
const propRequestTimeout = "meterstore.s3.request-timeout"

// defaultRequestTimeout bounds one request to the object store when
// cold.s3.request_timeout is not set.
const defaultRequestTimeout = time.Minute

// IsObjectStore is whether loc is on object storage (s3://…) rather than a
// local file system.
func IsObjectStore(loc string) bool {
	u, err := url.Parse(loc)
	if err != nil {
		return false
	}
	for _, s := range s3Schemes {
		if strings.EqualFold(u.Scheme, s) {
			return true
		}
	}
	return false
}

// ioProps are the properties iceberg-go opens the warehouse's file IO with.
// They carry the S3 secret, so they go to iceberg-go's file IO and nowhere
// else: never into table properties, a log line or a response.
func (c *Catalog) ioProps() iceberg.Properties {
	p := iceberg.Properties{"warehouse": c.opt.Warehouse}
	if !IsObjectStore(c.opt.Warehouse) {
		return p
	}
	s := c.opt.S3
	set := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	set(iceio.S3EndpointURL, s.Endpoint)
	set(iceio.S3Region, s.Region)
	set(iceio.S3AccessKeyID, s.AccessKeyID)
	set(iceio.S3SecretAccessKey, s.SecretAccessKey.Reveal())
	set(iceio.S3SessionToken, s.SessionToken.Reveal())
	p[iceio.S3ForceVirtualAddressing] = strconv.FormatBool(!s.UsesPathStyle())
	if s.RequestTimeout > 0 {
		p[propRequestTimeout] = s.RequestTimeout.String()
	}
	return p
}

func openS3(ctx context.Context, parsed *url.URL, props map[string]string) (iceio.IO, error) {
	client, err := sharedS3Client(ctx, props)
	if err != nil {
		return nil, err
	}
	bucket, err := s3blob.OpenBucketV2(ctx, client, parsed.Host, nil)
	if err != nil {
		return nil, err
	}
	return prefixTolerantIO{blobfs.New(ctx, bucket, blobfs.DefaultObjectLocationExtractor(parsed.Host, s3Schemes...))}, nil
}

// prefixTolerantIO is the bucket's file IO with a walk (orphan cleanup's
// listing) that skips a "directory" gone by the time it is read. A prefix is
// listed with its parent, then read on its own; when its last object is
// deleted in between (a concurrent expiry or compaction), or the store keeps
// empty directories listed after their objects are deleted (SeaweedFS does),
// reading it finds nothing and the walk failed with "file does not exist".
type prefixTolerantIO struct{ *blobfs.FileIO }

func (p prefixTolerantIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	return p.FileIO.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil && d != nil && d.IsDir() && errors.Is(err, fs.ErrNotExist) {
			return fs.SkipDir
		}
		return fn(path, d, err)
	})
}

// s3Clients holds one S3 client per configuration (s3ClientKey). iceberg-go
// opens the file IO anew for every table load and commit; a client per
// opening kept its HTTP transport, idle connections and CA pool reachable, so
// a handle archiving day after day held about 1.3 MiB more per commit.
var s3Clients sync.Map

// sharedS3Client is the client for props, built once per configuration.
func sharedS3Client(ctx context.Context, props map[string]string) (*s3.Client, error) {
	key := s3ClientKey(props)
	if c, ok := s3Clients.Load(key); ok {
		return c.(*s3.Client), nil
	}
	c, err := s3ClientFromProps(ctx, props)
	if err != nil {
		return nil, err
	}
	shared, _ := s3Clients.LoadOrStore(key, c)
	return shared.(*s3.Client), nil
}

// s3ClientKey digests what s3ClientFromProps builds a client from: the
// properties it reads and the AWS_ environment its credential chain and CA
// bundle come from, so a changed environment gets a client of its own.
func s3ClientKey(props map[string]string) [sha256.Size]byte {
	h := sha256.New()
	for _, k := range []string{propRequestTimeout, iceio.S3Region, iceio.S3AccessKeyID, iceio.S3SecretAccessKey,
		iceio.S3SessionToken, iceio.S3EndpointURL, iceio.S3ForceVirtualAddressing} {
		fmt.Fprintf(h, "%s=%s\x00", k, props[k])
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWS_") {
			fmt.Fprintf(h, "%s\x00", kv)
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

func s3ClientFromProps(ctx context.Context, props map[string]string) (*s3.Client, error) {
	timeout := defaultRequestTimeout
	if v := props[propRequestTimeout]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("cold.s3.request_timeout %q: %w", v, err)
		}
		timeout = d
	}
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(timeout).
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = timeout })
	opts := []func(*config.LoadOptions) error{config.WithHTTPClient(httpClient)}
	if r := props[iceio.S3Region]; r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	if id := props[iceio.S3AccessKeyID]; id != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			id, props[iceio.S3SecretAccessKey], props[iceio.S3SessionToken])))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load the AWS configuration: %w", err)
	}
	endpoint := props[iceio.S3EndpointURL]
	if cfg.Region == "" {
		// S3-compatible stores accept any region in the signature; AWS's
		// own default region answers for every bucket with a redirect.
		cfg.Region = "us-east-1"
	}
	forceVirtual, _ := strconv.ParseBool(props[iceio.S3ForceVirtualAddressing])
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = !forceVirtual
		o.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}

// ObjectStoreError is a failed request to the warehouse's object store, told
// as the setting that explains it: the endpoint (unreachable), the request
// timeout (too slow), the credentials (refused) or the warehouse (no such
// bucket).
type ObjectStoreError struct {
	Setting string // e.g. cold.s3.endpoint
	Problem string
	Fix     string
	Err     error
}

func (e *ObjectStoreError) Error() string {
	return fmt.Sprintf("object store: %s: %s (%s): %v", e.Setting, e.Problem, e.Fix, e.Err)
}

func (e *ObjectStoreError) Unwrap() error { return e.Err }

// explainObjectStore turns err, when it came from the object store, into an
// ObjectStoreError naming the setting; other errors pass through unchanged.
func (c *Catalog) explainObjectStore(err error) error {
	if err == nil || !IsObjectStore(c.opt.Warehouse) {
		return err
	}
	var ose *ObjectStoreError
	if errors.As(err, &ose) {
		return err
	}
	s := c.opt.S3
	endpoint := s.Endpoint
	if endpoint == "" {
		endpoint = "AWS S3"
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket":
			return &ObjectStoreError{Setting: "cold.warehouse", Problem: fmt.Sprintf("the bucket of %s does not exist at %s", c.opt.Warehouse, endpoint),
				Fix: "create the bucket, or correct the warehouse location", Err: err}
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "InvalidSecurity", "Forbidden":
			return &ObjectStoreError{Setting: "cold.s3.access_key_id, cold.s3.secret_access_key", Problem: fmt.Sprintf("%s refused the credentials (%s)", endpoint, api.ErrorCode()),
				Fix: "correct the key pair, or leave both unset to take the AWS credential chain", Err: err}
		}
	}
	if isTimeout(err) {
		timeout := s.RequestTimeout
		if timeout == 0 {
			timeout = defaultRequestTimeout
		}
		return &ObjectStoreError{Setting: "cold.s3.request_timeout", Problem: fmt.Sprintf("%s did not answer within %s", endpoint, timeout),
			Fix: "check the store's load and network, or raise the timeout", Err: err}
	}
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return &ObjectStoreError{Setting: "cold.s3.endpoint", Problem: fmt.Sprintf("the connection to %s failed", endpoint),
			Fix: "check that the store runs and the endpoint is its address", Err: err}
	}
	if strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role found") {
		return &ObjectStoreError{Setting: "cold.s3.access_key_id, cold.s3.secret_access_key", Problem: "no credentials: none are set and the AWS credential chain found none",
			Fix: "set the key pair, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a shared credentials file or an instance role", Err: err}
	}
	return err
}

// explainObjectStore is explainObjectStore for a method's named error result.
func (t *Table) explainObjectStore(err *error) { *err = t.c.explainObjectStore(*err) }

func isTimeout(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var rerr interface{ Timeout() bool }
	return errors.As(err, &rerr) && rerr.Timeout()
}

// checkWarehouse lists at most one object under the warehouse, so Open fails
// on a wrong endpoint, credentials or bucket with the setting to fix instead
// of the first archival failing later.
func (c *Catalog) checkWarehouse(ctx context.Context) error {
	if !IsObjectStore(c.opt.Warehouse) {
		return nil
	}
	u, err := url.Parse(c.opt.Warehouse)
	if err != nil || u.Host == "" {
		return &ObjectStoreError{Setting: "cold.warehouse", Problem: fmt.Sprintf("%q names no bucket", c.opt.Warehouse), Fix: "write s3://bucket/prefix", Err: err}
	}
	client, err := s3ClientFromProps(ctx, c.ioProps())
	if err != nil {
		return c.explainObjectStore(err)
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	_, err = client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(u.Host), Prefix: aws.String(prefix), MaxKeys: aws.Int32(1)})
	if err != nil {
		return fmt.Errorf("catalog: reach the warehouse %s: %w", c.opt.Warehouse, c.explainObjectStore(err))
	}
	return nil
}
