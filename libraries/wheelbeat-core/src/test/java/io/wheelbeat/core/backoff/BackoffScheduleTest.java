package io.wheelbeat.core.backoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ScriptedRandom;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BackoffScheduleTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000 * MS;

    private final BackoffPolicy unjittered = BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(1))
            .build();
    private final BackoffSchedule schedule = new BackoffSchedule(unjittered, new ScriptedRandom());

    @Test
    void nextAttemptIsDueTheDelayAfterTheStartOfTheFailedAttempt() {
        schedule.attemptStarted(5 * S);
        assertTrue(schedule.attemptFailed(5 * S + 30 * MS));
        assertEquals(5 * S + 100 * MS, schedule.nextAttemptNanos());
        assertEquals(100 * MS, schedule.lastDelayNanos());
    }

    @Test
    void attemptThatFailsAfterItsDelayIsFollowedAtOnce() {
        schedule.attemptStarted(0);
        assertTrue(schedule.attemptFailed(3 * S));
        assertEquals(100 * MS, schedule.nextAttemptNanos(), "a deadline already past: the wheel fires it next tick");
    }

    @Test
    void consecutiveFailuresFollowThePolicysSequence() {
        List<Long> deadlines = new ArrayList<>();
        long now = 0;
        for (int i = 0; i < 5; i++) {
            schedule.attemptStarted(now);
            assertTrue(schedule.attemptFailed(now + MS));
            now = schedule.nextAttemptNanos();
            deadlines.add(now);
        }
        assertEquals(List.of(100 * MS, 300 * MS, 700 * MS, 1500 * MS, 2500 * MS), deadlines);
        assertEquals(5, schedule.failures());
    }

    @Test
    void resetStartsTheNextRunAtTheFirstDelay() {
        for (int i = 0; i < 4; i++) {
            schedule.attemptStarted(0);
            schedule.attemptFailed(0);
        }
        assertEquals(800 * MS, schedule.lastDelayNanos());
        schedule.reset();
        assertEquals(0, schedule.failures());
        assertEquals(0, schedule.lastDelayNanos());
        schedule.attemptStarted(10 * S);
        assertTrue(schedule.attemptFailed(10 * S));
        assertEquals(100 * MS, schedule.lastDelayNanos());
    }

    @Test
    void failureAfterResetIsMeasuredFromTheFailureNotFromTheOldAttempt() {
        schedule.attemptStarted(0);
        schedule.reset(); // connected and proved healthy
        assertTrue(schedule.attemptFailed(3_600 * S)); // lost an hour later
        assertEquals(3_600 * S + 100 * MS, schedule.nextAttemptNanos());
    }

    @Test
    void connectionLostBeforeProvingHealthyCountsAsAFailedAttempt() {
        schedule.attemptStarted(0);
        schedule.attemptFailed(0);
        schedule.attemptStarted(100 * MS); // connects, then the server drops it at once
        assertTrue(schedule.attemptFailed(101 * MS));
        assertEquals(2, schedule.failures());
        assertEquals(100 * MS + 200 * MS, schedule.nextAttemptNanos());
    }

    @Test
    void givesUpWhenTheAttemptsAreUsedUp() {
        BackoffSchedule limited = new BackoffSchedule(
                BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(1))
                        .maxAttempts(3)
                        .build(),
                new ScriptedRandom());
        limited.attemptStarted(0);
        assertTrue(limited.attemptFailed(0));
        limited.attemptStarted(100 * MS);
        assertTrue(limited.attemptFailed(100 * MS));
        limited.attemptStarted(300 * MS);
        assertFalse(limited.attemptFailed(300 * MS));
        assertEquals(3, limited.failures());
    }

    @Test
    void decorrelatedScheduleFeedsEachDelayBackAsThePrevious() {
        BackoffPolicy decorrelated = BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(10))
                .multiplier(3)
                .decorrelatedJitter()
                .build();
        BackoffSchedule run = new BackoffSchedule(decorrelated, new ScriptedRandom(0.5, 0.5));
        run.attemptFailed(0);
        assertEquals(200 * MS, run.lastDelayNanos());
        run.attemptFailed(0);
        assertEquals(350 * MS, run.lastDelayNanos()); // between 100 and 3 x 200
    }

    @Test
    void deadlineOfAnEnormousDelaySaturates() {
        BackoffSchedule run = new BackoffSchedule(
                BackoffPolicy.exponential(Duration.ofNanos(Long.MAX_VALUE), Duration.ofNanos(Long.MAX_VALUE))
                        .build(),
                new ScriptedRandom());
        run.attemptStarted(5 * S);
        assertTrue(run.attemptFailed(5 * S));
        assertEquals(Long.MAX_VALUE, run.nextAttemptNanos());
    }

    @Test
    void nullArgumentsAreRejected() {
        assertThrows(NullPointerException.class, () -> new BackoffSchedule(null, new SplittableRandom()));
        assertThrows(NullPointerException.class, () -> new BackoffSchedule(unjittered, null));
    }

    /**
     * Drives retries with a timing wheel in virtual time, polled every tick: every attempt fails
     * 3 ms after it starts, and each retry must start at the first poll at or after the failed
     * attempt's start plus the seeded policy's delay (a retry already due when the attempt fails
     * starts at the next poll).
     */
    @Test
    void retriesOnATimerWheelStartAtTheFirstPollAtOrAfterTheirDeadline() {
        long[] now = {0};
        TimerWheel wheel = new TimerWheel(now[0], 1L << 20, 4096);
        long tick = wheel.tickNanos();
        BackoffPolicy policy = BackoffPolicy.exponential(Duration.ofMillis(50), Duration.ofMillis(400))
                .fullJitter()
                .build();
        BackoffSchedule run = new BackoffSchedule(policy, new SplittableRandom(11));
        List<Long> starts = new ArrayList<>();
        List<Long> expectedStarts = new ArrayList<>();

        class Attempt {
            long failsAt;

            void start() {
                starts.add(now[0]);
                run.attemptStarted(now[0]);
                failsAt = now[0] + 3 * MS;
                wheel.scheduleAt(
                        new TimerNode() {
                            @Override
                            protected void expire() {
                                fail();
                            }
                        },
                        failsAt);
            }

            void fail() {
                assertTrue(run.attemptFailed(now[0]));
                long deadline = run.nextAttemptNanos();
                // Polls come every tick; one already due waits for the next poll.
                expectedStarts.add(deadline <= failsAt ? now[0] + tick : (deadline + tick - 1) / tick * tick);
                wheel.scheduleAt(
                        new TimerNode() {
                            @Override
                            protected void expire() {
                                start();
                            }
                        },
                        deadline);
            }
        }
        new Attempt().start();
        while (starts.size() < 12) {
            now[0] += tick;
            wheel.poll(now[0]);
        }
        SplittableRandom draws = new SplittableRandom(11);
        for (int k = 0; k < 11; k++) {
            long ceiling = Math.min(400 * MS, 50 * MS << k);
            long delay = Math.round(draws.nextDouble() * ceiling);
            assertTrue(starts.get(k + 1) >= starts.get(k) + delay, "retry " + (k + 1) + " started early");
            assertEquals(expectedStarts.get(k), starts.get(k + 1), "retry " + (k + 1));
        }
    }
}
