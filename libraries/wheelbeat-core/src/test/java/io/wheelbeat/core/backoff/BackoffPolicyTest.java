package io.wheelbeat.core.backoff;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ScriptedRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class BackoffPolicyTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000 * MS;

    private static BackoffPolicy.Builder from100msTo1s() {
        return BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(1));
    }

    /** The delays of retries 1..n, feeding each delay back as the previous one. */
    private static List<Long> delays(BackoffPolicy policy, int n, RandomGenerator random) {
        List<Long> delays = new ArrayList<>();
        long previous = 0;
        for (int failures = 1; failures <= n; failures++) {
            previous = policy.delayNanos(failures, previous, random);
            delays.add(previous);
        }
        return delays;
    }

    // ---------------------------------------------------------------- exponential growth and cap

    @Test
    void unjitteredDelaysDoubleFromTheInitialDelayUpToTheCap() {
        BackoffPolicy policy = from100msTo1s().build();
        assertEquals(
                List.of(100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS, 1000 * MS),
                delays(policy, 6, new ScriptedRandom()));
    }

    @Test
    void multiplierSetsTheGrowthPerFailure() {
        BackoffPolicy policy = from100msTo1s().multiplier(1.5).build();
        assertEquals(List.of(100 * MS, 150 * MS, 225 * MS, 337_500_000L), delays(policy, 4, new ScriptedRandom()));
    }

    @Test
    void multiplierOfOneKeepsTheDelayConstant() {
        BackoffPolicy policy = from100msTo1s().multiplier(1.0).build();
        assertEquals(List.of(100 * MS, 100 * MS, 100 * MS), delays(policy, 3, new ScriptedRandom()));
    }

    @Test
    void unjitteredDelayDrawsNoRandomness() {
        ScriptedRandom random = new ScriptedRandom();
        from100msTo1s().build().delayNanos(3, 0, random);
        assertEquals(0, random.draws());
    }

    @Test
    void capHoldsForTheLargestFailureCount() {
        BackoffPolicy policy = from100msTo1s().build();
        assertEquals(1000 * MS, policy.delayNanos(Integer.MAX_VALUE, 0, new ScriptedRandom()));
    }

    @Test
    void capOfLongMaxValueNanosSaturatesInsteadOfOverflowing() {
        BackoffPolicy policy = BackoffPolicy.exponential(Duration.ofSeconds(1), Duration.ofNanos(Long.MAX_VALUE))
                .proportionalJitter(1.0)
                .build();
        assertEquals(Long.MAX_VALUE, policy.delayNanos(Integer.MAX_VALUE, 0, new ScriptedRandom(0.999)));
    }

    // ---------------------------------------------------------------- the AWS jitters

    @Test
    void fullJitterIsTheDrawTimesTheCeiling() {
        BackoffPolicy policy = from100msTo1s().fullJitter().build();
        ScriptedRandom random = new ScriptedRandom(0.5, 0.25, 0.0, 0.999);
        // ceilings 100, 200, 400, 800 ms
        assertEquals(List.of(50 * MS, 50 * MS, 0L, 799_200_000L), delays(policy, 4, random));
        assertEquals(4, random.draws());
    }

    @Test
    void equalJitterIsHalfTheCeilingPlusTheDrawTimesTheOtherHalf() {
        BackoffPolicy policy = from100msTo1s().equalJitter().build();
        ScriptedRandom random = new ScriptedRandom(0.0, 0.5, 0.999);
        // ceilings 100, 200, 400 ms
        assertEquals(List.of(50 * MS, 150 * MS, 399_800_000L), delays(policy, 3, random));
    }

    @Test
    void decorrelatedJitterDrawsBetweenTheInitialDelayAndThePreviousDelayTimesTheMultiplier() {
        BackoffPolicy policy = BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(10))
                .multiplier(3)
                .decorrelatedJitter()
                .build();
        ScriptedRandom random = new ScriptedRandom(0.5, 0.5, 0.0);
        // previous 0 counts as the initial delay: [100, 300) -> 200; [100, 600) -> 350; [100, 1050) -> 100
        assertEquals(List.of(200 * MS, 350 * MS, 100 * MS), delays(policy, 3, random));
    }

    @Test
    void decorrelatedJitterIsCapped() {
        BackoffPolicy policy = BackoffPolicy.exponential(Duration.ofMillis(100), Duration.ofSeconds(10))
                .multiplier(3)
                .decorrelatedJitter()
                .build();
        assertEquals(10 * S, policy.delayNanos(5, 9 * S, new ScriptedRandom(0.9)));
    }

    @Test
    void decorrelatedJitterDependsOnThePreviousDelayNotOnTheFailureCount() {
        BackoffPolicy policy =
                from100msTo1s().multiplier(3).decorrelatedJitter().build();
        assertEquals(
                policy.delayNanos(1, 200 * MS, new ScriptedRandom(0.5)),
                policy.delayNanos(7, 200 * MS, new ScriptedRandom(0.5)));
    }

    // ---------------------------------------------------------------- gRPC

    @Test
    void grpcPresetHasGrpcsDocumentedNumbers() {
        BackoffPolicy grpc = BackoffPolicy.grpc();
        assertEquals(Duration.ofSeconds(1), grpc.initialDelay());
        assertEquals(1.6, grpc.multiplier());
        assertEquals(Duration.ofSeconds(120), grpc.maxDelay());
        assertEquals(BackoffPolicy.FOREVER, grpc.maxAttempts());
        // A draw of 0.5 is the middle of +/-20%: the delay is the ceiling itself.
        double[] middle = new double[14];
        java.util.Arrays.fill(middle, 0.5);
        assertEquals(
                List.of(
                        1 * S,
                        1_600 * MS,
                        2_560 * MS,
                        4_096 * MS,
                        6_553_600_000L,
                        10_485_760_000L,
                        16_777_216_000L,
                        26_843_545_600L,
                        42_949_672_960L,
                        68_719_476_736L,
                        109_951_162_778L,
                        120 * S,
                        120 * S,
                        120 * S),
                delays(grpc, 14, new ScriptedRandom(middle)));
    }

    @Test
    void grpcJitterSpansPlusOrMinusTwentyPercentOfTheCeiling() {
        BackoffPolicy grpc = BackoffPolicy.grpc();
        assertEquals(800 * MS, grpc.delayNanos(1, 0, new ScriptedRandom(0.0)));
        assertEquals(2_816 * MS, grpc.delayNanos(3, 0, new ScriptedRandom(0.75)));
        assertEquals(144 * S, grpc.delayNanos(30, 0, new ScriptedRandom(1.0)));
    }

    // ---------------------------------------------------------------- seeded randomness

    @Test
    void sameSeedGivesTheSameSequence() {
        for (BackoffPolicy policy : everyJitter()) {
            assertEquals(
                    delays(policy, 20, new SplittableRandom(42)),
                    delays(policy, 20, new SplittableRandom(42)),
                    policy.toString());
        }
    }

    @Test
    void seededFullJitterSequenceIsExact() {
        BackoffPolicy policy = from100msTo1s().fullJitter().build();
        SplittableRandom expectedDraws = new SplittableRandom(7);
        List<Long> expected = new ArrayList<>();
        long[] ceilings = {100 * MS, 200 * MS, 400 * MS, 800 * MS, 1000 * MS};
        for (long ceiling : ceilings) {
            expected.add(Math.round(expectedDraws.nextDouble() * ceiling));
        }
        assertEquals(expected, delays(policy, 5, new SplittableRandom(7)));
    }

    @Test
    void everyJitterStaysWithinItsBoundsOverManySeededDraws() {
        SplittableRandom random = new SplittableRandom(2024);
        long initial = 100 * MS;
        long max = 1000 * MS;
        for (int i = 0; i < 20_000; i++) {
            int failures = 1 + random.nextInt(40);
            long ceiling = Math.min(max, Math.round(initial * Math.pow(2, failures - 1)));
            long previous = random.nextLong(0, 2 * max);
            long full = from100msTo1s().fullJitter().build().delayNanos(failures, previous, random);
            assertTrue(full >= 0 && full <= ceiling, "full " + full);
            long equal = from100msTo1s().equalJitter().build().delayNanos(failures, previous, random);
            assertTrue(equal >= ceiling / 2 && equal <= ceiling, "equal " + equal);
            long decorrelated =
                    from100msTo1s().multiplier(3).decorrelatedJitter().build().delayNanos(failures, previous, random);
            assertTrue(decorrelated >= initial && decorrelated <= max, "decorrelated " + decorrelated);
            long proportional = from100msTo1s().proportionalJitter(0.2).build().delayNanos(failures, previous, random);
            assertTrue(
                    proportional >= Math.round(ceiling * 0.8) && proportional <= Math.round(ceiling * 1.2),
                    "proportional " + proportional);
        }
    }

    @Test
    void fullJitterUsesTheWholeRange() {
        BackoffPolicy policy = from100msTo1s().fullJitter().build();
        SplittableRandom random = new SplittableRandom(5);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 10_000; i++) {
            long delay = policy.delayNanos(1, 0, random);
            min = Math.min(min, delay);
            max = Math.max(max, delay);
        }
        assertTrue(min < 1 * MS, "min " + min);
        assertTrue(max > 99 * MS, "max " + max);
    }

    private static List<BackoffPolicy> everyJitter() {
        List<UnaryOperator<BackoffPolicy.Builder>> jitters = List.of(
                BackoffPolicy.Builder::noJitter,
                BackoffPolicy.Builder::fullJitter,
                BackoffPolicy.Builder::equalJitter,
                BackoffPolicy.Builder::decorrelatedJitter,
                b -> b.proportionalJitter(0.2));
        List<BackoffPolicy> policies = new ArrayList<>();
        for (UnaryOperator<BackoffPolicy.Builder> jitter : jitters) {
            policies.add(jitter.apply(from100msTo1s()).build());
        }
        return policies;
    }

    // ---------------------------------------------------------------- attempts

    @Test
    void maxAttemptsCountsTheFirstAttempt() {
        BackoffPolicy policy = from100msTo1s().maxAttempts(3).build();
        assertTrue(policy.retryAllowed(1));
        assertTrue(policy.retryAllowed(2));
        assertFalse(policy.retryAllowed(3));
    }

    @Test
    void maxAttemptsOfOneNeverRetries() {
        assertFalse(from100msTo1s().maxAttempts(1).build().retryAllowed(1));
    }

    @Test
    void foreverNeverGivesUp() {
        BackoffPolicy policy = from100msTo1s().maxAttempts(2).forever().build();
        assertTrue(policy.retryAllowed(Integer.MAX_VALUE - 1));
        assertEquals(BackoffPolicy.FOREVER, policy.maxAttempts());
    }

    // ---------------------------------------------------------------- bad input

    @Test
    void nonPositiveInitialDelayIsRejected() {
        assertThrows(
                IllegalArgumentException.class, () -> BackoffPolicy.exponential(Duration.ZERO, Duration.ofSeconds(1)));
        assertThrows(
                IllegalArgumentException.class,
                () -> BackoffPolicy.exponential(Duration.ofMillis(-1), Duration.ofSeconds(1)));
    }

    @Test
    void maxBelowInitialIsRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> BackoffPolicy.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1)));
    }

    @Test
    void nullDurationsAreRejected() {
        assertThrows(NullPointerException.class, () -> BackoffPolicy.exponential(null, Duration.ofSeconds(1)));
        assertThrows(NullPointerException.class, () -> BackoffPolicy.exponential(Duration.ofSeconds(1), null));
    }

    @Test
    void durationBeyondLongNanosIsRejected() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> BackoffPolicy.exponential(Duration.ofSeconds(1), Duration.ofDays(365L * 1000)));
        assertTrue(e.getMessage().contains("max"), e.getMessage());
    }

    @Test
    void multiplierBelowOneOrNotFiniteIsRejected() {
        for (double bad : new double[] {0.99, 0, -2, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class, () -> from100msTo1s().multiplier(bad), "" + bad);
        }
    }

    @Test
    void jitterFractionOutsideZeroToOneIsRejected() {
        for (double bad : new double[] {-0.01, 1.01, Double.NaN}) {
            assertThrows(IllegalArgumentException.class, () -> from100msTo1s().proportionalJitter(bad), "" + bad);
        }
    }

    @Test
    void maxAttemptsBelowOneIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> from100msTo1s().maxAttempts(0));
    }

    @Test
    void delayForFewerThanOneFailureIsRejected() {
        assertThrows(
                IllegalArgumentException.class, () -> from100msTo1s().build().delayNanos(0, 0, new ScriptedRandom()));
    }

    @Test
    void negativePreviousDelayIsRejected() {
        assertThrows(
                IllegalArgumentException.class, () -> from100msTo1s().build().delayNanos(1, -1, new ScriptedRandom()));
    }

    @Test
    void nullRandomIsRejected() {
        assertThrows(NullPointerException.class, () -> from100msTo1s().build().delayNanos(1, 0, null));
    }

    @Test
    void toStringNamesTheJitter() {
        assertEquals(
                "BackoffPolicy(PT1S x1.6 up to PT2M, jitter +/-0.2, forever)",
                BackoffPolicy.grpc().toString());
        assertEquals(
                "BackoffPolicy(PT0.1S x2.0 up to PT1S, full jitter, at most 5 attempts)",
                from100msTo1s().fullJitter().maxAttempts(5).build().toString());
    }
}
