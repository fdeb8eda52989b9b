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
 * and where they show a hidden type (internal, or not public): in their hierarchy (extends,
 * implements) or in a public or protected member's signature. For each module's public-API test.
 */
public final class ExportedApi {

    private final List<Class<?>> types;
    private final String basePackage;

    private ExportedApi(List<Class<?>> types, String basePackage) {
        this.types = types;
        this.basePackage = basePackage;
    }

    /**
     * The exported types of the module that holds {@code anchor}: every visible type under
     * {@code basePackage} outside its internal packages (those with an {@code internal} segment).
     */
    public static ExportedApi of(Class<?> anchor, String basePackage)
            throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(
                anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve(basePackage.replace('.', '/')))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(file)
                        .toString()
                        .replace(file.getFileSystem().getSeparator(), ".")
                        .replaceAll("\\.class$", "");
                if (name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName(name, false, anchor.getClassLoader());
                if (isExported(type) && !isInternal(type.getPackageName())) {
                    types.add(type);
                }
            }
        }
        return new ExportedApi(types, basePackage);
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
                    if ((Modifier.isPublic(modifiers) || open && Modifier.isProtected(modifiers))
                            && !m.isSynthetic()
                            && !m.isBridge()
                            && !NOTHING_TO_LEARN.contains(m.getName())) {
                        lines.add(
                                type.getName() + "." + m.getName() + java.util.Arrays.toString(m.getParameterTypes()));
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
    private static final java.util.Set<String> NOTHING_TO_LEARN = java.util.Set.of(
            "handlerAdded",
            "handlerRemoved",
            "channelRegistered",
            "channelUnregistered",
            "channelActive",
            "channelInactive",
            "channelRead",
            "channelReadComplete",
            "userEventTriggered",
            "channelWritabilityChanged",
            "exceptionCaught",
            "bind",
            "connect",
            "disconnect",
            "close",
            "deregister",
            "read",
            "write",
            "flush",
            "isSharable",
            "toString",
            "equals",
            "hashCode");

    /**
     * Fails unless the module's exported types are at least {@code minimumTypes} (the scan found
     * them), none shows a hidden type ({@link #hiddenTypeLeaks()}), and the surface is within
     * {@code surfaceBudget} lines.
     */
    public void assertHiddenAndWithin(int minimumTypes, int surfaceBudget) {
        org.junit.jupiter.api.Assertions.assertTrue(
                types.size() >= minimumTypes, "found the exported types: " + types.size());
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), hiddenTypeLeaks());
        List<String> surface = surface();
        org.junit.jupiter.api.Assertions.assertTrue(
                surface.size() <= surfaceBudget,
                "the API surface under "
                        + basePackage + " is " + surface.size()
                        + " lines (types and members), over its budget of " + surfaceBudget + ":\n"
                        + String.join("\n", surface));
    }

    /**
     * Every place an exported type shows a type a user cannot or must not name, one line each;
     * empty when none. Checked: its superclasses and superinterfaces, transitively through
     * wheelbeat's types (a supertype from Netty or the JDK is that library's business), with their
     * type arguments; its type parameters' bounds; and each public or protected field, constructor
     * and method: parameter, return, exception types and type parameters' bounds, generic
     * arguments included. Shown means named anywhere in those types: a type of any package with an
     * {@code internal} segment (this module's, another wheelbeat module's, or a library's), or a
     * wheelbeat type that is not public (nor protected, where nested).
     */
    public List<String> hiddenTypeLeaks() {
        List<String> leaks = new ArrayList<>();
        for (Class<?> type : types) {
            checkBounds(leaks, type.getName(), type.getTypeParameters());
            java.util.Deque<Class<?>> hierarchy = new java.util.ArrayDeque<>(List.of(type));
            java.util.Set<Class<?>> seen = new java.util.HashSet<>();
            while (!hierarchy.isEmpty()) {
                Class<?> t = hierarchy.pop();
                if (!seen.add(t) || !t.getName().startsWith(WHEELBEAT)) {
                    continue;
                }
                List<Type> supertypes = new ArrayList<>(List.of(t.getGenericInterfaces()));
                if (t.getGenericSuperclass() != null) {
                    supertypes.add(t.getGenericSuperclass());
                }
                for (Type up : supertypes) {
                    check(
                            leaks,
                            type.getName() + (t == type ? "" : " through " + t.getName()) + " extends "
                                    + up.getTypeName() + ", naming",
                            up);
                    hierarchy.push(erasure(up));
                }
            }
            for (Method m : type.getDeclaredMethods()) {
                if (visible(m.getModifiers()) && !m.isSynthetic()) {
                    String where = type.getName() + "." + m.getName();
                    checkExecutable(leaks, where, m);
                    check(leaks, where + " returns", m.getGenericReturnType());
                }
            }
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (visible(c.getModifiers()) && !c.isSynthetic()) {
                    checkExecutable(leaks, type.getName() + " constructor", c);
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f.getModifiers()) && !f.isSynthetic()) {
                    check(leaks, type.getName() + "." + f.getName() + " is", f.getGenericType());
                }
            }
        }
        return leaks;
    }

    private static final String WHEELBEAT = "io.wheelbeat.";

    private void checkExecutable(List<String> leaks, String where, Executable e) {
        checkBounds(leaks, where, e.getTypeParameters());
        for (Type parameter : e.getGenericParameterTypes()) {
            check(leaks, where + " takes", parameter);
        }
        for (Type thrown : e.getGenericExceptionTypes()) {
            check(leaks, where + " throws", thrown);
        }
    }

    private void checkBounds(List<String> leaks, String where, java.lang.reflect.TypeVariable<?>[] parameters) {
        for (java.lang.reflect.TypeVariable<?> parameter : parameters) {
            for (Type bound : parameter.getBounds()) {
                check(leaks, where + " bounds " + parameter.getName() + " by", bound);
            }
        }
    }

    /** Adds a line for each hidden class named in {@code type}, type arguments and bounds included. */
    private void check(List<String> leaks, String where, Type type) {
        if (type instanceof java.lang.reflect.ParameterizedType p) {
            check(leaks, where, p.getRawType());
            if (p.getOwnerType() != null) {
                check(leaks, where, p.getOwnerType());
            }
            for (Type argument : p.getActualTypeArguments()) {
                check(leaks, where, argument);
            }
        } else if (type instanceof java.lang.reflect.WildcardType w) {
            for (Type bound : w.getUpperBounds()) {
                check(leaks, where, bound);
            }
            for (Type bound : w.getLowerBounds()) {
                check(leaks, where, bound);
            }
        } else if (type instanceof java.lang.reflect.GenericArrayType a) {
            check(leaks, where, a.getGenericComponentType());
        } else if (type instanceof Class<?> c) {
            while (c.isArray()) {
                c = c.getComponentType();
            }
            if (isInternal(c.getPackageName())) {
                leaks.add(where + " " + c.getName() + " (internal)");
            } else if (c.getName().startsWith(WHEELBEAT) && !isExported(c)) {
                leaks.add(where + " " + c.getName() + " (not public)");
            }
        }
        // A type variable names nothing itself: its bounds are checked where it is declared.
    }

    private static Class<?> erasure(Type type) {
        return type instanceof java.lang.reflect.ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) type;
    }

    /** A package with an {@code internal} segment: the module does not export it to users. */
    static boolean isInternal(String packageName) {
        return List.of(packageName.split("\\.")).contains("internal");
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
