package dev.fencing.agent.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The agent process's JVM and process meters (jvm_memory_*, jvm_threads_*, jvm_classes_*, process_cpu_usage,
 * process_uptime_seconds, process_files_open_files, ...). Only binders that read on scrape: JvmGcMetrics is left
 * out because it subscribes to every GC notification and allocates on each, which the idle agent's footprint budget
 * (bench/REPORT.md) does not allow; GC time is visible in process CPU.
 */
public final class ProcessMetrics {

  private ProcessMetrics() {}

  /** Binds the meters to {@code registry}. */
  public static void bind(MeterRegistry registry) {
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
  }
}
