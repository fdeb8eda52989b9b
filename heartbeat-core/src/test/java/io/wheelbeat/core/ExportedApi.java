package io.wheelbeat.core;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The public and protected types of a module's exported packages, read from its compiled classes,
 * and where they show an internal type: in their hierarchy (extends, implements) or in a public
 * or protected member's signature. For each module's public-API test.
 */
public final class ExportedApi {

    private final List<Class<?>> types;
    private final String internalPrefix;

    private ExportedApi(List<Class<?>> types, String internalPrefix) {
        this.types = types;
        this.internalPrefix = internalPrefix;
    }

    /**
     * The exported types of the module that holds {@code anchor}: every visible type under
     * {@code basePackage} outside {@code internalPackage}.
     */
    public static ExportedApi of(Class<?> anchor, String basePackage, String internalPackage)
            throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        String internalPrefix = internalPackage + ".";
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve(basePackage.replace('.', '/')))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".")
                        .replaceAll("\\.class$", "");
                if (name.startsWith(internalPrefix) || name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, anchor.getClassLoader());
                if (isExported(type)) {
                    types.add(type);
                }
            }
        }
        return new ExportedApi(types, internalPrefix);
    }

    /** The exported types. */
    public List<Class<?>> types() {
        return types;
    }

    /**
     * The API a user learns: for each exported type, its name and every public or protected
     * member it declares or inherits from a wheelbeat supertype (package-private and internal
     * supertypes included, since their public members are callable through it), one line each,
     * sorted. Protected members count only where a user can subclass (a final type's are out of
     * reach); overrides of Netty's channel-handler callbacks and of {@code Object}'s methods are
     * left out: they add nothing to learn.
     */
    public List<String> surface() {
        java.util.TreeSet<String> lines = new java.util.TreeSet<>();
        for (Class<?> type : types) {
            lines.add(type.getName());
            boolean open = !Modifier.isFinal(type.getModifiers());
            for (Class<?> t = type; t != null && t.getName().startsWith("io.wheelbeat."); t = t.getSuperclass()) {
                for (Method m : t.getDeclaredMethods()) {
                    int modifiers = m.getModifiers();
                    if ((Modifier.isPublic(modifiers) || open && Modifier.isProtected(modifiers)) && !m.isSynthetic()
                            && !m.isBridge() && !NOTHING_TO_LEARN.contains(m.getName())) {
                        lines.add(type.getName() + "." + m.getName() + java.util.Arrays.toString(m.getParameterTypes()));
                    }
                }
                for (Field f : t.getDeclaredFields()) {
                    int modifiers = f.getModifiers();
                    if ((Modifier.isPublic(modifiers) || open && Modifier.isProtected(modifiers)) && !f.isSynthetic()) {
                        lines.add(type.getName() + "." + f.getName());
                    }
                }
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                int modifiers = c.getModifiers();
                if (Modifier.isPublic(modifiers) || open && Modifier.isProtected(modifiers)) {
                    lines.add(type.getName() + ".<init>" + java.util.Arrays.toString(c.getParameterTypes()));
                }
            }
        }
        return new ArrayList<>(lines);
    }

    /** Netty's channel-handler callbacks and Object's methods, which handlers override. */
    private static final java.util.Set<String> NOTHING_TO_LEARN = java.util.Set.of("handlerAdded", "handlerRemoved",
            "channelRegistered", "channelUnregistered", "channelActive", "channelInactive", "channelRead",
            "channelReadComplete", "userEventTriggered", "channelWritabilityChanged", "exceptionCaught", "bind",
            "connect", "disconnect", "close", "deregister", "read", "write", "flush", "isSharable", "toString",
            "equals", "hashCode");

    /**
     * Fails unless the module's exported types are at least {@code minimumTypes} (the scan found
     * them), none shows an internal type, and the surface is within {@code surfaceBudget} lines.
     */
    public void assertHiddenAndWithin(int minimumTypes, int surfaceBudget) {
        org.junit.jupiter.api.Assertions.assertTrue(types.size() >= minimumTypes, "found the exported types: " + types.size());
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), internalLeaks());
        List<String> surface = surface();
        org.junit.jupiter.api.Assertions.assertTrue(surface.size() <= surfaceBudget, "the API surface under "
                + internalPrefix.replaceAll("\\.internal\\.$", "") + " is " + surface.size()
                + " lines (types and members), over its budget of " + surfaceBudget + ":\n" + String.join("\n", surface));
    }

    /** Every place an exported type shows an internal type, one line each; empty when none. */
    public List<String> internalLeaks() {
        List<String> leaks = new ArrayList<>();
        for (Class<?> type : types) {
            for (Class<?> up = type.getSuperclass(); up != null; up = up.getSuperclass()) {
                check(leaks, type + " extends", up);
                for (Class<?> iface : up.getInterfaces()) {
                    check(leaks, type + " implements", iface);
                }
            }
            for (Class<?> iface : type.getInterfaces()) {
                check(leaks, type + " implements", iface);
            }
            for (Method m : type.getDeclaredMethods()) {
                if (visible(m.getModifiers()) && !m.isSynthetic()) {
                    checkParameters(leaks, type + "." + m.getName(), m);
                    if (m.getGenericReturnType().getTypeName().contains(internalPrefix)) {
                        leaks.add(type + "." + m.getName() + " returns " + m.getGenericReturnType().getTypeName());
                    }
                }
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (visible(c.getModifiers())) {
                    checkParameters(leaks, type + " constructor", c);
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f.getModifiers())) {
                    check(leaks, type + "." + f.getName(), f.getType());
                }
            }
        }
        return leaks;
    }

    private void checkParameters(List<String> leaks, String where, Executable e) {
        for (Type parameter : e.getGenericParameterTypes()) {
            if (parameter.getTypeName().contains(internalPrefix)) {
                leaks.add(where + " takes " + parameter.getTypeName());
            }
        }
    }

    private void check(List<String> leaks, String where, Class<?> type) {
        if (type.getName().startsWith(internalPrefix)) {
            leaks.add(where + " " + type.getName());
        }
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static boolean isExported(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getDeclaringClass()) {
            if (!visible(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
                return false;
            }
        }
        return true;
    }
}
