package duckstream

import (
	"container/list"
	"errors"
	"io"
	"sync"
	"time"
)

// Kept keeps prepared statements by key between their runs: a run takes the
// one kept for its key (no longer kept, so two runs never share one) and
// gives it back when it ended cleanly. At most max are kept, the least
// recently given back closed first; one given back after Close is closed.
// Those not taken again for a while are closed by CloseIdle: each holds a
// connection and its plan, memory a burst of runs at once multiplies (one
// kept per run that was going at the same time).
type Kept[K comparable, V io.Closer] struct {
	max    int
	now    func() time.Time // when a value is given back
	mu     sync.Mutex
	idle   list.List // of keptEntry[K, V], the most recently given back first
	closed bool
}

type keptEntry[K comparable, V io.Closer] struct {
	key   K
	v     V
	given time.Time // when it was given back
}

// NewKept keeps up to max values.
func NewKept[K comparable, V io.Closer](max int) *Kept[K, V] {
	return &Kept[K, V]{max: max, now: time.Now}
}

// Take is the value kept for key, no longer kept; false if none is.
func (k *Kept[K, V]) Take(key K) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for el := k.idle.Front(); el != nil; el = el.Next() {
		if e := el.Value.(keptEntry[K, V]); e.key == key {
			k.idle.Remove(el)
			return e.v, true
		}
	}
	var none V
	return none, false
}

// GiveBack keeps v for the next Take of key, closing what falls past max.
func (k *Kept[K, V]) GiveBack(key K, v V) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		v.Close()
		return
	}
	k.idle.PushFront(keptEntry[K, V]{key, v, k.now()})
	var evicted []V
	for k.idle.Len() > k.max {
		evicted = append(evicted, k.idle.Remove(k.idle.Back()).(keptEntry[K, V]).v)
	}
	k.mu.Unlock()
	for _, v := range evicted {
		v.Close()
	}
}

// CloseIdle closes the values given back before idleSince and not taken
// since, and returns how many it closed.
func (k *Kept[K, V]) CloseIdle(idleSince time.Time) int {
	k.mu.Lock()
	var idle []V
	for el := k.idle.Back(); el != nil; el = k.idle.Back() {
		e := el.Value.(keptEntry[K, V])
		if !e.given.Before(idleSince) {
			break
		}
		idle = append(idle, e.v)
		k.idle.Remove(el)
	}
	k.mu.Unlock()
	for _, v := range idle {
		v.Close()
	}
	return len(idle)
}

// Values are the values kept, the most recently given back first.
func (k *Kept[K, V]) Values() []V {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]V, 0, k.idle.Len())
	for el := k.idle.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(keptEntry[K, V]).v)
	}
	return out
}

// Len is how many values are kept.
func (k *Kept[K, V]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.idle.Len()
}

// Close closes every value kept; one taken is closed when given back.
func (k *Kept[K, V]) Close() error {
	k.mu.Lock()
	k.closed = true
	var all []V
	for el := k.idle.Front(); el != nil; el = el.Next() {
		all = append(all, el.Value.(keptEntry[K, V]).v)
	}
	k.idle.Init()
	k.mu.Unlock()
	var err error
	for _, v := range all {
		err = errors.Join(err, v.Close())
	}
	return err
}
