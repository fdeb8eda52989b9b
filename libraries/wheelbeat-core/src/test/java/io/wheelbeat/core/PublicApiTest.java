package io.wheelbeat.core;

import io.wheelbeat.core.internal.WheelSettings;
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
                .assertHiddenAndWithin(20, 165);
    }
}
