package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Test;

/**
 * The exported API never shows the internal package: no public type extends or implements an
 * internal type, and no public or protected member takes, returns or exposes one (issue 16).
 */
class PublicApiTest {

    private static final String INTERNAL = "io.wheelbeat.netty.internal.";

    @Test
    void noPublicTypeHasAnInternalTypeInItsHierarchyOrSignatures() throws Exception {
        List<String> leaks = new ArrayList<>();
        List<Class<?>> types = exportedTypes();
        assertTrue(types.size() > 30, "found the exported types: " + types.size());
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
                    checkSignature(leaks, type + "." + m.getName(), m);
                    check(leaks, type + "." + m.getName() + " returns", m.getReturnType());
                }
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (visible(c.getModifiers())) {
                    checkSignature(leaks, type + " constructor", c);
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f.getModifiers())) {
                    check(leaks, type + "." + f.getName(), f.getType());
                }
            }
        }
        assertEquals(List.of(), leaks);
    }

    private static void checkSignature(List<String> leaks, String where, Executable e) {
        for (Type parameter : e.getGenericParameterTypes()) {
            if (parameter.getTypeName().contains(INTERNAL)) {
                leaks.add(where + " takes " + parameter.getTypeName());
            }
        }
    }

    private static void check(List<String> leaks, String where, Class<?> type) {
        if (type.getName().startsWith(INTERNAL)) {
            leaks.add(where + " " + type.getName());
        }
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    /** The public and protected types (nested ones included) of netty-handler's exported packages. */
    private static List<Class<?>> exportedTypes() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(EventLoopWheels.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve("io/wheelbeat/netty"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".")
                        .replaceAll("\\.class$", "");
                if (name.startsWith(INTERNAL) || name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
                if (isExported(type)) {
                    types.add(type);
                }
            }
        }
        return types;
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
