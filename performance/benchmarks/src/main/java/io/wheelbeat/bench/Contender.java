package io.wheelbeat.bench;

import java.util.Arrays;

/** The timers compared, by the names used in the benchmarks' {@code contender} parameter. */
enum Contender {
    /** Ours on the owner thread: {@code TimerWheel}'s long-id API. */
    OURS("ours", false),
    /** Design experiment: ours with array slots ({@link ArraySlotsAdapter}). */
    OURS_ARRAYS("ours-arrays", false),
    /** Ours through the thread-safe {@code WheelTimer}, called from another thread. */
    OURS_WHEELTIMER("ours-wheeltimer", true),
    /** Netty's {@code HashedWheelTimer}. */
    NETTY_HWT("netty-hwt", true),
    /** Netty event-loop {@code schedule} / {@code cancel} on the loop thread. */
    NETTY_EVENTLOOP("netty-eventloop", false),
    /** The JDK's {@code ScheduledThreadPoolExecutor}, one thread. */
    JDK_STPE("jdk-stpe", true),
    /** Agrona's {@code DeadlineTimerWheel}. */
    AGRONA("agrona", false),
    /** Kafka's {@code SystemTimer} with its reaper thread. */
    KAFKA("kafka", true);

    final String id;
    final boolean threaded;

    Contender(String id, boolean threaded) {
        this.id = id;
        this.threaded = threaded;
    }

    /**
     * Builds the contender for {@code capacity} timers. Owner-thread contenders run on virtual
     * time if asked; threaded ones always run in real time.
     *
     * @throws IllegalArgumentException if a threaded contender is asked for virtual time
     */
    TimerAdapter create(int capacity, boolean virtualTime) {
        if (virtualTime && threaded) {
            throw new IllegalArgumentException(id + " has its own thread: it runs in real time only");
        }
        return switch (this) {
            case OURS -> new OursAdapter(capacity, virtualTime);
            case OURS_ARRAYS -> new ArraySlotsAdapter(capacity, virtualTime);
            case OURS_WHEELTIMER -> new OursWheelTimerAdapter(capacity);
            case NETTY_HWT -> new NettyHashedWheelTimerAdapter(capacity);
            case NETTY_EVENTLOOP -> new NettyEventLoopAdapter(capacity, virtualTime);
            case JDK_STPE -> new JdkScheduledExecutorAdapter(capacity);
            case AGRONA -> new AgronaAdapter(capacity, virtualTime);
            case KAFKA -> new KafkaAdapter(capacity);
        };
    }

    /**
     * Returns the contender named {@code id}.
     *
     * @throws IllegalArgumentException naming the known ids if there is no such contender
     */
    static Contender of(String id) {
        for (Contender c : values()) {
            if (c.id.equals(id)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown contender '" + id + "'; known: "
                + Arrays.stream(values()).map(c -> c.id).toList());
    }
}
