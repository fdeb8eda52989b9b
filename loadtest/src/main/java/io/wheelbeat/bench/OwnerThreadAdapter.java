package io.wheelbeat.bench;

/** A contender driven by the calling thread ({@link #poll()}), which may run on virtual time. */
abstract class OwnerThreadAdapter extends TimerAdapter {

    OwnerThreadAdapter(int capacity) {
        super(capacity);
    }

    @Override
    final boolean threaded() {
        return false;
    }

    @Override
    abstract void advanceTime(long nanos);

    @Override
    public void close() {
        // No thread to stop.
    }
}
