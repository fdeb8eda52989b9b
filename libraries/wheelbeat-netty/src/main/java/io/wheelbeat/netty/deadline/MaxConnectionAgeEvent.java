package io.wheelbeat.netty.deadline;

/**
 * A user event of {@link ConnectionDeadlineHandler} at the connection's maximum age, the moment to
 * say goodbye; the channel is closed {@link #graceNanos()} later.
 *
 * @param ageNanos the age this connection was given, jitter included, in nanoseconds
 * @param graceNanos how long after this event the channel is forcibly closed, in nanoseconds
 */
public record MaxConnectionAgeEvent(long ageNanos, long graceNanos) {}
