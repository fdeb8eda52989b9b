package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.wheelbeat.core.apicheck.Leaks;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checks of {@link ExportedApi} each catch the leak they are for (fixtures: package apicheck). */
class ExportedApiTest {

    @Test
    void everyWayToShowAHiddenTypeIsReported() throws Exception {
        ExportedApi api = ExportedApi.of(Leaks.class, "io.wheelbeat.core.apicheck");
        assertEquals(
                List.of(),
                api.types().stream()
                        .filter(t -> t.getPackageName().endsWith(".internal"))
                        .toList(),
                "internal types are not part of the exported API");
        assertEquals(
                List.of(
                        "io.wheelbeat.core.apicheck.Leaks$Bounded bounds T by"
                                + " io.wheelbeat.core.apicheck.internal.Engine (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$ExtendsAHiddenClass extends"
                                + " io.wheelbeat.core.apicheck.Leaks$Base, naming"
                                + " io.wheelbeat.core.apicheck.Leaks$Base (not public)",
                        "io.wheelbeat.core.apicheck.Leaks$InATypeArgument extends"
                                + " java.lang.Comparable<io.wheelbeat.core.apicheck.internal.Engine>, naming"
                                + " io.wheelbeat.core.apicheck.internal.Engine (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$Signatures constructor takes"
                                + " io.wheelbeat.core.apicheck.internal.Engine (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$Signatures.base is io.wheelbeat.core.apicheck.Leaks$Base"
                                + " (not public)",
                        "io.wheelbeat.core.apicheck.Leaks$Signatures.bounded bounds T by"
                                + " io.wheelbeat.core.apicheck.internal.Engine$Part (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$Signatures.returned returns"
                                + " io.wheelbeat.core.apicheck.internal.Engine (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$Signatures.thrown throws"
                                + " io.wheelbeat.core.apicheck.internal.Engine$Failure (internal)",
                        "io.wheelbeat.core.apicheck.Leaks$ThroughASuperinterface extends"
                                + " io.wheelbeat.core.apicheck.Leaks$Step, naming"
                                + " io.wheelbeat.core.apicheck.Leaks$Step (not public)",
                        "io.wheelbeat.core.apicheck.Leaks$ThroughASuperinterface through"
                                + " io.wheelbeat.core.apicheck.Leaks$Step extends"
                                + " io.wheelbeat.core.apicheck.internal.Engine$Part, naming"
                                + " io.wheelbeat.core.apicheck.internal.Engine$Part (internal)"),
                api.hiddenTypeLeaks().stream().sorted().toList());
    }
}
