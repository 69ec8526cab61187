use criterion::{black_box, criterion_group, criterion_main, Criterion};
fn bench(c: &mut Criterion) {
    c.bench_function("fib 10", |b| b.iter(|| tinybench::fib(black_box(10))));
    c.bench_function("fib 12", |b| b.iter(|| tinybench::fib(black_box(12))));
}
criterion_group!(benches, bench);
criterion_main!(benches);
