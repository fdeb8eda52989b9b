package io.wheelbeat.netty.idle;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.timeout.IdleState;
import io.wheelbeat.netty.internal.ConnectionMeters;

/**
 * The counter {@code wheelbeat.idle.events} (events), tagged {@code state} = {@code reader},
 * {@code writer} or {@code all}: idle state events fired. Looked up once per builder and shared
 * by every handler it builds. Thread-safe.
 */
final class IdleEventCounters {

    static final String NAME = "wheelbeat.idle.events";

    private final Counter reader;
    private final Counter writer;
    private final Counter all;

    IdleEventCounters(MeterRegistry registry) {
        this.reader = counter(registry, "reader");
        this.writer = counter(registry, "writer");
        this.all = counter(registry, "all");
    }

    void increment(IdleState state) {
        switch (state) {
            case READER_IDLE -> reader.increment();
            case WRITER_IDLE -> writer.increment();
            case ALL_IDLE -> all.increment();
        }
    }

    private static Counter counter(MeterRegistry registry, String state) {
        return ConnectionMeters.counter(registry, NAME, "Idle state events fired", "events", "state", state);
    }
}
