//! One byte sequence per figure: `svg2pdf` 0.13 walks hash maps when it writes a figure's
//! fonts and its resource dictionaries, so the same SVG can come out with its font objects
//! numbered in another order and its `/Font` or `/ExtGState` entries listed in another order.
//! Both orders mean nothing to a reader; [`canonical`] rewrites the file into one of them:
//! every dictionary made only of references is sorted by key (the keys, `fo0`, `gs1`…, are
//! given in drawing order), then the objects are renumbered in the order a breadth-first
//! walk from the catalog first reaches them, and the cross-reference table is rebuilt.
//!
//! It reads the layout `pdf-writer` writes (`N 0 obj`, a dictionary, an optional stream of
//! `/Length` bytes, `endobj`, then `xref` and `trailer`) and refuses anything else, which
//! would be a change of `svg2pdf` the tests catch.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

use anyhow::{bail, Context, Result};

/// One indirect object: its dictionary text and its stream bytes, when it has a stream.
struct Object<'a> {
    dict: Vec<u8>,
    stream: Option<&'a [u8]>,
}

/// The canonical form of a PDF `svg2pdf` wrote (see the module's doc).
pub(crate) fn canonical(pdf: &[u8]) -> Result<Vec<u8>> {
    let header_end = find(pdf, b"\n\n", 0).context("no PDF header")? + 2;
    let (mut objects, trailer_at) = read_objects(pdf, header_end)?;
    let trailer = &pdf[trailer_at..];
    let root = reference_after(trailer, b"/Root ").context("the trailer names no /Root")?;
    let info = reference_after(trailer, b"/Info ");
    for object in objects.values_mut() {
        object.dict = sorted_reference_dicts(&object.dict);
    }
    let order = walk_order(&objects, root, info);
    let numbers: BTreeMap<u32, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &old)| (old, i as u32 + 1))
        .collect();
    let mut out = pdf[..header_end].to_vec();
    let mut offsets = Vec::with_capacity(order.len());
    for old in &order {
        let object = &objects[old];
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", numbers[old]).bytes());
        out.extend(renumbered(&object.dict, &numbers));
        if let Some(stream) = object.stream {
            out.extend(b"\nstream\n");
            out.extend(stream);
            out.extend(b"\nendstream");
        }
        out.extend(b"\nendobj\n\n");
    }
    let xref_at = out.len();
    let mut tail = format!("xref\n0 {}\n0000000000 65535 f\r\n", order.len() + 1);
    for offset in offsets {
        let _ = write!(tail, "{offset:010} 00000 n\r\n");
    }
    let _ = write!(
        tail,
        "trailer\n<<\n  /Size {}\n  /Root {} 0 R\n",
        order.len() + 1,
        numbers[&root]
    );
    if let Some(info) = info {
        let _ = writeln!(tail, "  /Info {} 0 R", numbers[&info]);
    }
    let _ = write!(tail, ">>\nstartxref\n{xref_at}\n%%EOF");
    out.extend(tail.bytes());
    Ok(out)
}

/// The objects from `at` up to the cross-reference table, by number, and where the trailer
/// starts.
fn read_objects(pdf: &[u8], mut at: usize) -> Result<(BTreeMap<u32, Object<'_>>, usize)> {
    let mut objects = BTreeMap::new();
    while !pdf[at..].starts_with(b"xref\n") {
        let digits = pdf[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let number: u32 = std::str::from_utf8(&pdf[at..at + digits])?
            .parse()
            .with_context(|| format!("no object number at byte {at}"))?;
        at += digits;
        if !pdf[at..].starts_with(b" 0 obj\n") {
            bail!("object {number} does not start as `N 0 obj`");
        }
        at += b" 0 obj\n".len();
        let end = find(pdf, b"\nendobj\n\n", at).context("an object has no endobj")?;
        let stream_at = find(pdf, b"\nstream\n", at).filter(|&s| s < end);
        let object = match stream_at {
            None => {
                let dict = pdf[at..end].to_vec();
                at = end + b"\nendobj\n\n".len();
                Object { dict, stream: None }
            }
            Some(s) => {
                let dict = pdf[at..s].to_vec();
                let length =
                    integer_after(&dict, b"/Length ").context("a stream has no /Length")?;
                let data_at = s + b"\nstream\n".len();
                let data = pdf
                    .get(data_at..data_at + length)
                    .context("a stream is cut short")?;
                at = data_at + length;
                if !pdf[at..].starts_with(b"\nendstream\nendobj\n\n") {
                    bail!("object {number}'s stream does not end where its /Length says");
                }
                at += b"\nendstream\nendobj\n\n".len();
                Object {
                    dict,
                    stream: Some(data),
                }
            }
        };
        if objects.insert(number, object).is_some() {
            bail!("object {number} is written twice");
        }
    }
    let trailer = find(pdf, b"trailer\n", at).context("no trailer")?;
    Ok((objects, trailer))
}

/// Object numbers in the order a breadth-first walk from the catalog (then the document
/// information) reaches them; objects nothing reaches follow, by their bytes.
fn walk_order(objects: &BTreeMap<u32, Object<'_>>, root: u32, info: Option<u32>) -> Vec<u32> {
    let mut order = Vec::with_capacity(objects.len());
    let mut seen = std::collections::BTreeSet::new();
    let mut queue: VecDeque<u32> = [root].into_iter().chain(info).collect();
    while let Some(number) = queue.pop_front() {
        let Some(object) = objects.get(&number) else {
            continue;
        };
        if !seen.insert(number) {
            continue;
        }
        order.push(number);
        queue.extend(references(&object.dict).into_iter().map(|(_, _, n)| n));
    }
    let mut rest: Vec<u32> = objects
        .keys()
        .copied()
        .filter(|n| !seen.contains(n))
        .collect();
    rest.sort_by(|a, b| {
        let (a, b) = (&objects[a], &objects[b]);
        (&a.dict, a.stream).cmp(&(&b.dict, b.stream))
    });
    order.extend(rest);
    order
}

/// Every `N 0 R` in `text`: (start, end, N).
fn references(text: &[u8]) -> Vec<(usize, usize, u32)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(r) = find(text, b" 0 R", at) {
        at = r + 4;
        let start = text[..r]
            .iter()
            .rposition(|b| !b.is_ascii_digit())
            .map_or(0, |p| p + 1);
        let ends_token = text.get(r + 4).is_none_or(|b| !b.is_ascii_alphanumeric());
        let starts_token = start == 0 || !text[start - 1].is_ascii_alphanumeric();
        if start < r && ends_token && starts_token {
            if let Ok(number) = std::str::from_utf8(&text[start..r]).unwrap_or("").parse() {
                found.push((start, r + 4, number));
            }
        }
    }
    found
}

/// `text` with every reference's number replaced by its new one.
fn renumbered(text: &[u8], numbers: &BTreeMap<u32, u32>) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut last = 0;
    for (start, end, number) in references(text) {
        out.extend(&text[last..start]);
        let new = numbers.get(&number).copied().unwrap_or(number);
        out.extend(format!("{new} 0 R").bytes());
        last = end;
    }
    out.extend(&text[last..]);
    out
}

/// `dict` with every run of `/key N 0 R` lines that makes up a whole nested dictionary
/// (opened by a line ending in `<<`, closed by a `>>` line) sorted by key.
fn sorted_reference_dicts(dict: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = dict.split(|&b| b == b'\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let opens = lines[i].ends_with(b"<<");
        let run = lines[i + 1..]
            .iter()
            .take_while(|line| is_reference_entry(line))
            .count();
        let closes = lines
            .get(i + 1 + run)
            .is_some_and(|line| line.trim_ascii() == b">>");
        if opens && run > 1 && closes {
            lines[i + 1..i + 1 + run].sort();
        }
        i += 1 + run;
    }
    lines.join(&b'\n')
}

/// A dictionary line `/name N 0 R`.
fn is_reference_entry(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    line.starts_with(b"/")
        && line.ends_with(b" 0 R")
        && references(line).len() == 1
        && line.iter().filter(|&&b| b == b' ').count() == 3
}

/// The number after `key` in `text` (`/Length 309`).
fn integer_after(text: &[u8], key: &[u8]) -> Option<usize> {
    let at = find(text, key, 0)? + key.len();
    let digits = text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&text[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

/// The object number of the reference after `key` in `text` (`/Root 3 0 R`).
fn reference_after(text: &[u8], key: &[u8]) -> Option<u32> {
    u32::try_from(integer_after(text, key)?).ok()
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written file in `pdf-writer`'s layout: the font objects in the "wrong" order
    /// and the font dictionary's entries swapped, as a run of `svg2pdf` may write them.
    fn sample(fonts_first: bool) -> Vec<u8> {
        let (f0, f1) = if fonts_first { (2, 3) } else { (3, 2) };
        let mut pdf = b"%PDF-1.7\n%\x80\x80\n\n".to_vec();
        let mut offsets = Vec::new();
        let mut object = |pdf: &mut Vec<u8>, n: u32, body: String| {
            offsets.push((n, pdf.len()));
            pdf.extend(format!("{n} 0 obj\n{body}\nendobj\n\n").bytes());
        };
        object(
            &mut pdf,
            1,
            "<<\n  /Type /Catalog\n  /Pages 4 0 R\n>>".into(),
        );
        object(&mut pdf, f0, "<<\n  /Type /Font\n  /BaseFont /A\n>>".into());
        object(&mut pdf, f1, "<<\n  /Type /Font\n  /BaseFont /B\n>>".into());
        let fonts = if fonts_first {
            format!("      /fo0 {f0} 0 R\n      /fo1 {f1} 0 R")
        } else {
            format!("      /fo1 {f1} 0 R\n      /fo0 {f0} 0 R")
        };
        let page =
            format!("<<\n  /Type /Page\n  /Resources <<\n    /Font <<\n{fonts}\n    >>\n  >>\n>>");
        object(&mut pdf, 4, page);
        let xref = pdf.len();
        pdf.extend(
            format!(
                "xref\n0 5\ntrailer\n<<\n  /Size 5\n  /Root 1 0 R\n>>\nstartxref\n{xref}\n%%EOF"
            )
            .bytes(),
        );
        pdf
    }

    #[test]
    fn object_order_and_dictionary_order_do_not_reach_the_bytes() {
        let (a, b) = (
            canonical(&sample(true)).unwrap(),
            canonical(&sample(false)).unwrap(),
        );
        assert_ne!(sample(true), sample(false));
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        let text = String::from_utf8_lossy(&a);
        // Catalog first, then the page it names, then the fonts in key order.
        assert!(
            text.contains("1 0 obj\n<<\n  /Type /Catalog\n  /Pages 2 0 R"),
            "{text}"
        );
        assert!(text.contains("/fo0 3 0 R\n      /fo1 4 0 R"), "{text}");
        assert!(
            text.contains("3 0 obj\n<<\n  /Type /Font\n  /BaseFont /A"),
            "{text}"
        );
        // The cross-reference table points at each object.
        let xref = find(&a, b"xref\n", 0).unwrap();
        let tail = std::str::from_utf8(&a[xref..]).unwrap();
        let entries: Vec<&str> = tail.lines().skip(3).take(4).collect();
        for (i, entry) in entries.iter().enumerate() {
            let offset: usize = entry[..10].parse().unwrap();
            assert!(a[offset..].starts_with(format!("{} 0 obj\n", i + 1).as_bytes()));
        }
    }

    #[test]
    fn a_file_in_another_layout_is_refused() {
        assert!(canonical(b"%PDF-1.7\n\n1 0 obj <<>> endobj\n").is_err());
    }
}
