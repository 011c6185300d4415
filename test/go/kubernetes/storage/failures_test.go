package storage

import (
	"context"
	"errors"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// failingSwitch is a transformer whose reads fail ("synthetic error") while it is switched on.
type failingSwitch struct {
	value.Transformer
	fail atomic.Bool
}

func (f *failingSwitch) setFailing(on bool) { f.fail.Store(on) }

func (f *failingSwitch) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, bool, error) {
	if f.fail.Load() {
		return nil, false, errors.New("synthetic error")
	}
	return f.Transformer.TransformFromStorage(ctx, data, dataCtx)
}

// failingCodec is a codec whose decoding fails ("synthetic error") while it is switched on.
type failingCodec struct {
	runtime.Codec
	fail atomic.Bool
}

func (c *failingCodec) setFailing(on bool) { c.fail.Store(on) }

func (c *failingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if c.fail.Load() {
		return nil, nil, errors.New("synthetic error")
	}
	return c.Codec.Decode(data, defaults, into)
}
