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
