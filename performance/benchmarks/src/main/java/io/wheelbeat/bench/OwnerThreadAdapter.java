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

    /**
     * Returns how long from now until the earliest pending deadline, as a driver that wakes for
     * it would wait (0 if due), or -1 if nothing is pending. May fire what is due already.
     *
     * @throws UnsupportedOperationException if the contender cannot tell
     */
    long untilNextDeadline() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not tell its next deadline");
    }

    @Override
    public void close() {
        // No thread to stop.
    }
}
