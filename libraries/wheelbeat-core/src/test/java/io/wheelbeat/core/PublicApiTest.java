package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.internal.WheelSettings;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The core's exported API never shows its engine or another hidden type (no public type's
 * hierarchy or public signature names a type of a package with an {@code internal} segment, or a
 * non-public type: see {@link ExportedApi#hiddenTypeLeaks()}), and it does not grow unnoticed: its
 * surface and the timer package's type count stay within the budgets docs/api.md states (raise
 * them together, on purpose).
 */
class PublicApiTest {

    @Test
    void theEngineStaysHiddenAndTheSurfaceWithinItsBudget() throws Exception {
        ExportedApi.of(WheelSettings.class, "io.wheelbeat.core")
                // The budget grows only with a reason: each public member is a promise.
                .assertHiddenAndWithin(20, 167);
    }

    @Test
    void theTimerApiHasAtMostSixTypes() throws Exception {
        // Top-level types of io.wheelbeat.core itself; a nested builder is part of its class.
        List<String> timerTypes = ExportedApi.of(WheelSettings.class, "io.wheelbeat.core").types().stream()
                .filter(type -> type.getPackageName().equals("io.wheelbeat.core") && type.getEnclosingClass() == null)
                .map(Class::getSimpleName)
                .sorted()
                .toList();
        assertTrue(timerTypes.size() <= 6, "the timer API has " + timerTypes.size() + " types: " + timerTypes);
    }
}
