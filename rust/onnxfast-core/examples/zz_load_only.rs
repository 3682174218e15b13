use onnxfast_core::decode::lazy::decode_lazy;
use onnxfast_core::decode::source;
use onnxfast_core::DecodeOptions;
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let mapped = source::map_file(path.as_ref())?;
    let buf = mapped.bytes;
    let options = DecodeOptions {
        pages: mapped
            .pages
            .filter(|_| std::env::var_os("KEEP_PAGES").is_none()),
        ..DecodeOptions::default()
    };
    let mut ts = vec![];
    for _ in 0..n {
        let t = std::time::Instant::now();
        let lazy = decode_lazy(buf.clone(), &options)?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
        drop(lazy);
    }
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("median {:.2} ms min {:.2}", ts[ts.len() / 2], ts[0]);
    Ok(())
}
