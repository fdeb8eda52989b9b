package io.wheelbeat.docs;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

/**
 * Compiles one {@link JavaBlock} with {@code javax.tools.JavaCompiler} against a class path and
 * reports its errors at their Markdown lines. Class files are discarded. Not thread-safe: one
 * instance per test class, blocks compiled one after another.
 *
 * <p>A block is compiled in one of two ways:
 * <ul>
 *   <li><b>Compilation unit</b>: a block with a line that starts (unindented) with
 *       {@code package}, or with a class, interface, enum or record declaration, is compiled
 *       as it stands, as a {@code .java} file named after its public type.</li>
 *   <li><b>Fragment</b>: any other block is a method body (statements; local classes and
 *       records are fine), compiled inside a generated class after the {@link #PRELUDE} imports,
 *       with the {@link #CONTEXT} fields and stand-in types in scope. The method
 *       {@code throws Exception}. {@code import} lines in a fragment are moved to the
 *       generated file's imports (a snippet may show the import a reader needs). Anything else a
 *       fragment uses, it declares itself.</li>
 * </ul>
 */
final class SnippetCompiler implements AutoCloseable {

    /**
     * The imports every fragment gets: the library modules' exported packages, the JDK and Netty
     * packages the docs use, and Micrometer. {@code io.netty.util.Timer} is imported by name so
     * that {@code Timer} means Netty's timer, not Micrometer's.
     */
    static final String PRELUDE = """
            import java.time.Duration;
            import java.util.concurrent.CompletableFuture;
            import java.util.concurrent.TimeUnit;
            import static java.util.concurrent.TimeUnit.*;
            import io.netty.bootstrap.*;
            import io.netty.buffer.*;
            import io.netty.channel.*;
            import io.netty.channel.nio.*;
            import io.netty.channel.socket.*;
            import io.netty.channel.socket.nio.*;
            import io.netty.handler.codec.*;
            import io.netty.handler.codec.http.*;
            import io.netty.handler.codec.http.websocketx.*;
            import io.netty.handler.codec.http2.*;
            import io.netty.handler.codec.mqtt.*;
            import io.netty.handler.timeout.*;
            import io.netty.util.*;
            import io.netty.util.Timer;
            import io.micrometer.core.instrument.*;
            import io.micrometer.core.instrument.binder.netty4.*;
            import io.wheelbeat.core.*;
            import io.wheelbeat.core.backoff.*;
            import io.wheelbeat.core.ratelimit.*;
            import io.wheelbeat.netty.*;
            import io.wheelbeat.netty.deadline.*;
            import io.wheelbeat.netty.guard.*;
            import io.wheelbeat.netty.heartbeat.*;
            import io.wheelbeat.netty.http2.*;
            import io.wheelbeat.netty.idle.*;
            import io.wheelbeat.netty.mqtt.*;
            import io.wheelbeat.netty.ratelimit.*;
            import io.wheelbeat.netty.reconnect.*;
            import io.wheelbeat.netty.websocket.*;
            import io.wheelbeat.ratelimit.redis.*;
            """;

    /**
     * What a fragment may use without declaring it: a server's and a client's bootstrap, event loops and meter
     * registry, one connection's channel and pipeline, and stand-ins for the user's own protocol
     * messages ({@code Ping}, {@code Pong}) and handlers ({@code MyCodec}, {@code MyHandler}).
     * They are fields, so a fragment's lambda may name its parameter {@code ch} too.
     */
    static final String CONTEXT = """
                ServerBootstrap serverBootstrap;   // a server's bootstrap, groups set
                Bootstrap bootstrap;               // a client's bootstrap, group and handler set
                EventLoopGroup group;              // the event loops of a client or server
                MeterRegistry registry;            // where meters go
                Channel ch;                        // one connection
                ChannelPipeline pipeline;          // its pipeline
                record Ping(long id) { Ping() { this(0); } }
                record Pong(long pingId) { }
                static final class MyCodec extends ChannelDuplexHandler { }
                static final class MyHandler extends ChannelInboundHandlerAdapter { }
            """;

    private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
            "^(?:(public)\\s+)?(?:(?:abstract|final|sealed|non-sealed|strictfp)\\s+)*(?:class|interface|enum|record|@interface)\\s+([A-Za-z_$][\\w$]*)");
    private static final Pattern PACKAGE = Pattern.compile("^package\\s");
    private static final Pattern IMPORT =
            Pattern.compile("^\\s*import\\s+(?:static\\s+)?[\\w.]+(?:\\.\\*)?\\s*;\\s*(?://.*)?$");
    private static final String FRAGMENT_CLASS = "Snippet";

    private final JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    private final StandardJavaFileManager files;
    private final JavaFileManager discardingOutput;

    SnippetCompiler(String classPath) {
        files = compiler.getStandardFileManager(null, Locale.ROOT, null);
        try {
            files.setLocation(
                    StandardLocation.CLASS_PATH,
                    Arrays.stream(classPath.split(File.pathSeparator))
                            .filter(p -> !p.isEmpty())
                            .map(File::new)
                            .toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        discardingOutput = new ForwardingJavaFileManager<>(files) {
            @Override
            public JavaFileObject getJavaFileForOutput(
                    Location location, String className, JavaFileObject.Kind kind, FileObject sibling) {
                return new SimpleJavaFileObject(
                        URI.create("discarded:///" + className.replace('.', '/') + kind.extension), kind) {
                    @Override
                    public OutputStream openOutputStream() {
                        return OutputStream.nullOutputStream();
                    }
                };
            }
        };
    }

    /** True if the block is compiled as it stands rather than wrapped as a fragment. */
    static boolean isCompilationUnit(String code) {
        return code.lines()
                .anyMatch(l ->
                        PACKAGE.matcher(l).find() || TOP_LEVEL_TYPE.matcher(l).find());
    }

    /**
     * Compiles the block; returns its errors, each as {@code file:line: message} followed by the
     * offending code line, or an empty list if it compiles. Warnings are not reported.
     */
    List<String> errors(JavaBlock block) {
        Source source = isCompilationUnit(block.code()) ? compilationUnit(block.code()) : fragment(block.code());
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavaFileObject file =
                new SimpleJavaFileObject(
                        URI.create("string:///" + source.fileName() + ".java"), JavaFileObject.Kind.SOURCE) {
                    @Override
                    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                        return source.text();
                    }
                };
        compiler.getTask(
                        null,
                        discardingOutput,
                        diagnostics,
                        List.of("-proc:none", "-implicit:none", "--release", "17"),
                        null,
                        List.of(file))
                .call();
        String[] generated = source.text().split("\n", -1);
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            long line = d.getLineNumber();
            String message = d.getMessage(Locale.ROOT);
            String code = line >= 1 && line <= generated.length ? generated[(int) line - 1].strip() : "";
            long blockLine = line - source.firstBlockLine();
            if (line == Diagnostic.NOPOS
                    || blockLine < 0
                    || blockLine >= block.code().lines().count()) {
                errors.add(block.location() + " (generated line " + line + ": " + code + "): " + message);
            } else {
                errors.add(block.file() + ":" + (block.line() + blockLine) + ": " + message + "\n    " + code);
            }
        }
        return errors;
    }

    /** The Java file compiled for a block, and the line of that file that is the block's first line. */
    private record Source(String fileName, String text, int firstBlockLine) {}

    private static Source compilationUnit(String code) {
        String publicType = code.lines()
                .map(TOP_LEVEL_TYPE::matcher)
                .filter(m -> m.find() && m.group(1) != null)
                .map(m -> m.group(2))
                .findFirst()
                .orElse(FRAGMENT_CLASS);
        return new Source(publicType, code, 1);
    }

    private static Source fragment(String code) {
        List<String> imports = new ArrayList<>();
        String body = code.lines()
                .map(l -> {
                    Matcher m = IMPORT.matcher(l);
                    if (m.matches()) {
                        imports.add(l.strip());
                        return ""; // keeps the lines of the body where they are in the Markdown
                    }
                    return l;
                })
                .collect(Collectors.joining("\n"));
        String head = PRELUDE + String.join("\n", imports) + "\n" + "final class " + FRAGMENT_CLASS + " {\n" + CONTEXT
                + "    void run() throws Exception {\n";
        return new Source(
                FRAGMENT_CLASS, head + body + "\n    }\n}\n", (int) head.lines().count() + 1);
    }

    @Override
    public void close() throws IOException {
        files.close();
    }
}
