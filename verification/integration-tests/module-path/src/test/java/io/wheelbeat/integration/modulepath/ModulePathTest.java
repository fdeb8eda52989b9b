package io.wheelbeat.integration.modulepath;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.module.ResolvedModule;
import java.lang.reflect.Constructor;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * wheelbeat as a module user has it: this test runs inside the named module
 * {@code io.wheelbeat.integration.modulepath} (surefire patches it into the module, on the module
 * path), against wheelbeat's jars with their descriptors. Which packages are internal is read from
 * the descriptors, not named here: a package whose name has an {@code internal} segment must not
 * be exported to this module, and every other package must be exported to everyone.
 */
class ModulePathTest {

    private static final String THIS_MODULE = "io.wheelbeat.integration.modulepath";
    private static final Set<String> WHEELBEAT_MODULES = Set.of("io.wheelbeat.core", "io.wheelbeat.netty");
    private static final Duration GENEROUS = Duration.ofSeconds(10);
    /** javac's key (with -XDrawDiagnostics) for an import from a package its module does not export to the importer. */
    private static final Pattern NOT_VISIBLE = Pattern.compile("compiler\\.err\\.package\\.not\\.visible: ([\\w.]+),");

    @Test
    void theUserAndWheelbeatRunAsNamedModulesWithTheirDescriptors() {
        assertEquals(THIS_MODULE, ModulePathTest.class.getModule().getName());
        assertEquals(THIS_MODULE, LoopbackPair.class.getModule().getName());
        for (Class<?> type : List.of(WheelIdleStateHandler.class, EventLoopWheels.class)) {
            assertEquals("io.wheelbeat.netty", type.getModule().getName(), type.getName());
            assertFalse(type.getModule().getDescriptor().isAutomatic(), "a module-info, not a jar name");
        }
        assertEquals("io.wheelbeat.core", WheelTimer.class.getModule().getName());
        assertFalse(WheelTimer.class.getModule().getDescriptor().isAutomatic());
    }

    @Test
    void theExportedPackagesServeAPipelineOverLoopback() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (LoopbackPair pair = new LoopbackPair(Duration.ofMillis(300), Duration.ofMillis(50), meters)) {
            Object pong = pair.clientEvents().poll(GENEROUS.toMillis(), MILLISECONDS);
            assertInstanceOf(PongReceivedEvent.class, pong, "the heartbeat's first pong");
            assertTrue(((PongReceivedEvent) pong).first());
            assertTrue(
                    meters.get("wheelbeat.heartbeat.pings.sent").counter().count() >= 1,
                    "counted on the user's registry");
            assertTrue(
                    pair.serverEvents().isEmpty(), "the pings keep the server's reader busy: " + pair.serverEvents());
            pair.stopPinging();
            assertEquals(
                    IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT,
                    pair.serverEvents().poll(GENEROUS.toMillis(), MILLISECONDS),
                    "a silent client");
        }
    }

    @Test
    void theCoreDriversAndTheRateLimiterServeTheUser() throws Exception {
        WheelTimer timer = WheelTimer.builder().tick(Duration.ofMillis(1)).build();
        try {
            CountDownLatch fired = new CountDownLatch(1);
            timer.newTimeout(timeout -> fired.countDown(), MILLISECONDS.toNanos(20));
            assertTrue(fired.await(GENEROUS.toMillis(), MILLISECONDS), "the WheelTimer's task ran");
        } finally {
            timer.stop();
        }
        try (LoopbackPair pair =
                new LoopbackPair(Duration.ofMinutes(1), Duration.ofMinutes(1), new SimpleMeterRegistry())) {
            ExecutorDrivenWheel wheel =
                    EventLoopWheels.shared().wheelFor(pair.client().eventLoop());
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(2, Duration.ofMinutes(1)), wheel)
                    .build();
            try {
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("user"));
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("user"));
                assertTrue(limiter.tryAcquire("user") > 0, "the third in the window waits");
            } finally {
                limiter.close();
            }
        }
    }

    @Test
    void everyPackageOutsideTheInternalOnesIsExportedAndNoInternalOneIsReachable() {
        Module user = ModulePathTest.class.getModule();
        Map<String, Set<String>> internalByModule = internalPackages();
        for (String name : WHEELBEAT_MODULES) {
            Module module = ModuleLayer.boot().findModule(name).orElseThrow();
            assertFalse(internalByModule.get(name).isEmpty(), name + " has an internal package to hide");
            for (String pkg : module.getPackages()) {
                if (isInternal(pkg)) {
                    assertFalse(module.isExported(pkg, user), pkg + " is exported to " + THIS_MODULE);
                    assertFalse(module.isOpen(pkg, user), pkg + " is open to " + THIS_MODULE);
                    assertTrue(
                            module.getDescriptor().exports().stream()
                                    .noneMatch(e -> e.source().equals(pkg) && !e.isQualified()),
                            pkg + " is exported to all");
                } else {
                    assertTrue(module.isExported(pkg), pkg + " is not exported");
                }
            }
        }
    }

    @Test
    void reflectionCannotReachAnInternalType() throws Exception {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        int refusedMembers = 0;
        for (Class<?> type : publicInternalTypes()) {
            assertThrows(IllegalAccessException.class, () -> lookup.accessClass(type), type.getName());
            for (Constructor<?> c : type.getConstructors()) {
                assertThrows(
                        IllegalAccessException.class,
                        () -> c.newInstance(new Object[c.getParameterCount()]),
                        c.toString());
                assertThrows(InaccessibleObjectException.class, () -> c.setAccessible(true), c.toString());
                refusedMembers++;
            }
            for (Method m : type.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers())) {
                    assertThrows(
                            IllegalAccessException.class,
                            () -> m.invoke(null, new Object[m.getParameterCount()]),
                            m.toString());
                    refusedMembers++;
                }
            }
        }
        assertTrue(refusedMembers > 0, "found public constructors or static methods to try");
    }

    @Test
    void javacRefusesAnImportFromEveryInternalPackageAndAcceptsTheExportedOnes(@TempDir Path dir) throws IOException {
        Map<String, String> exportedTypes = new TreeMap<>();
        Map<String, String> internalTypes = new TreeMap<>();
        for (Class<?> type : publicTopLevelTypes()) {
            (isInternal(type.getPackageName()) ? internalTypes : exportedTypes)
                    .putIfAbsent(type.getPackageName(), type.getName());
        }
        assertEquals(
                internalPackages().values().stream().flatMap(Set::stream).collect(Collectors.toSet()),
                internalTypes.keySet(),
                "a public type in each internal package");

        assertEquals(
                List.of(),
                compileProbe(dir.resolve("exported"), exportedTypes.values()),
                "the exported packages compile");

        List<String> errors = compileProbe(dir.resolve("internal"), internalTypes.values());
        Set<String> refusedPackages = new TreeSet<>();
        for (String error : errors) {
            Matcher notVisible = NOT_VISIBLE.matcher(error);
            assertTrue(notVisible.find(), error);
            refusedPackages.add(notVisible.group(1));
        }
        assertEquals(internalTypes.keySet(), refusedPackages, "javac refused each internal package: " + errors);
    }

    /**
     * Compiles module {@code probe} ({@code requires io.wheelbeat.netty}) with one class that
     * imports {@code types}, on this test's module path; returns javac's error lines (empty when
     * it compiled).
     */
    private static List<String> compileProbe(Path dir, Iterable<String> types) throws IOException {
        StringBuilder imports = new StringBuilder();
        StringBuilder uses = new StringBuilder();
        for (String type : types) {
            imports.append("import ").append(type).append(";\n");
            uses.append(type.substring(type.lastIndexOf('.') + 1)).append(".class, ");
        }
        Path moduleInfo = Files.writeString(
                Files.createDirectories(dir.resolve("src")).resolve("module-info.java"),
                "module probe { requires io.wheelbeat.netty; }\n");
        Path probe = Files.writeString(
                Files.createDirectories(dir.resolve("src/probe")).resolve("Probe.java"),
                "package probe;\n" + imports + "class Probe { Class<?>[] used = { " + uses + "}; }\n");
        StringWriter output = new StringWriter();
        int exit;
        try (PrintWriter out = new PrintWriter(output)) {
            exit = ToolProvider.findFirst("javac")
                    .orElseThrow()
                    .run(
                            out,
                            out,
                            "-XDrawDiagnostics",
                            "-proc:none",
                            "--module-path",
                            System.getProperty("jdk.module.path"),
                            "-d",
                            dir.resolve("out").toString(),
                            moduleInfo.toString(),
                            probe.toString());
        }
        List<String> errors = output.toString()
                .lines()
                .filter(line -> line.contains("compiler.err."))
                .collect(Collectors.toList());
        assertEquals(exit == 0, errors.isEmpty(), output.toString());
        return errors;
    }

    private static boolean isInternal(String pkg) {
        return List.of(pkg.split("\\.")).contains("internal");
    }

    /** Each wheelbeat module's internal packages, as its descriptor lists them. */
    private static Map<String, Set<String>> internalPackages() {
        Map<String, Set<String>> byModule = new TreeMap<>();
        for (String name : WHEELBEAT_MODULES) {
            ModuleDescriptor descriptor =
                    ModuleLayer.boot().findModule(name).orElseThrow().getDescriptor();
            byModule.put(
                    name,
                    descriptor.packages().stream()
                            .filter(ModulePathTest::isInternal)
                            .collect(Collectors.toCollection(TreeSet::new)));
        }
        return byModule;
    }

    private static List<Class<?>> publicInternalTypes() {
        List<Class<?>> internal = new ArrayList<>();
        for (Class<?> type : publicTopLevelTypes()) {
            if (isInternal(type.getPackageName())) {
                internal.add(type);
            }
        }
        assertFalse(internal.isEmpty(), "found public internal types");
        return internal;
    }

    /** The public top-level classes of wheelbeat's modules, read from their jars. */
    private static List<Class<?>> publicTopLevelTypes() {
        List<Class<?>> types = new ArrayList<>();
        for (String name : WHEELBEAT_MODULES) {
            Module module = ModuleLayer.boot().findModule(name).orElseThrow();
            ResolvedModule resolved =
                    ModuleLayer.boot().configuration().findModule(name).orElseThrow();
            try (ModuleReader reader = resolved.reference().open();
                    Stream<String> entries = reader.list()) {
                entries.filter(e -> e.endsWith(".class")
                                && !e.contains("$")
                                && !e.endsWith("module-info.class")
                                && !e.endsWith("package-info.class"))
                        .map(e -> Class.forName(
                                module,
                                e.substring(0, e.length() - ".class".length()).replace('/', '.')))
                        .filter(type -> type != null && Modifier.isPublic(type.getModifiers()))
                        .forEach(types::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return types;
    }
}
