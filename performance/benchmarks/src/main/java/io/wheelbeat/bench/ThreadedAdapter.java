package io.wheelbeat.bench;

/**
 * A contender that fires on threads of its own, in real time: nothing to poll, and its threads'
 * CPU time is recorded ({@link WorkerThreads#retire()}) before they are stopped.
 */
abstract class ThreadedAdapter extends TimerAdapter {

    ThreadedAdapter(int capacity) {
        super(capacity);
    }

    /** Stops the contender's threads. */
    abstract void stopThreads();

    @Override
    final int poll() {
        return 0;
    }

    @Override
    final boolean threaded() {
        return true;
    }

    @Override
    public final void close() {
        WorkerThreads.retire();
        stopThreads();
    }
}
