package bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** Two benchmarks of the same loop: heavy runs it HEAVY_LOOPS times, light 1000 times. */
@State(Scope.Thread)
public class Work {
    static final int HEAVY_LOOPS = 3000;

    @Param({"1000"})
    public int loops;

    static long work(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += (long) i * i ^ (s >>> 3);
        }
        return s;
    }

    @Benchmark
    public long light() {
        return work(loops);
    }

    @Benchmark
    public long heavy() {
        return work(HEAVY_LOOPS);
    }
}
