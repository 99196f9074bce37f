fn main() {
    let s = String::from("x");
    let t = s;
    println!("{} {}", s, t);
}
