// Package mscons reads EDIFACT MSCONS interchanges — the metered values
// German network and metering point operators send — into
// metering.Delivery values, one message at a time, on an io.Reader with no
// I/O of its own.
//
// A message is all-or-nothing (design: "imports are deliveries"): either
// every value in it passed and Next returns its deliveries, or Next returns
// a *MessageError naming the message, the segment (tag, ordinal as UNT
// counts, line), the rule and the fix, and nothing of it is delivered. A
// refused message never stops the following ones. A *SyntaxError ends the
// stream: the reader cannot find the next boundary with confidence.
//
//	r := mscons.NewReader(f, mscons.Options{Now: time.Now})
//	for {
//		m, err := r.Next()
//		if errors.Is(err, io.EOF) {
//			break
//		}
//		var me *mscons.MessageError
//		if errors.As(err, &me) {
//			log.Print(err) // refused; go on with the next message
//			continue
//		}
//		if err != nil {
//			return err // the interchange cannot be read further
//		}
//		store(m.Deliveries)
//	}
//
// # Syntax
//
// UNA sets the separators (decimal comma or full stop); without UNA the
// ISO 9735 defaults ":+.? '" apply. "?" releases the next character, line
// breaks between segments (and a leading UTF-8 byte order mark) are
// ignored. Text is decoded by UNB's syntax identifier — UNOC (the MSCONS
// norm) as ISO 8859-1, UNOW/UNOY as UTF-8, UNOA/UNOB as ASCII — so a
// document number with an umlaut reaches the stored source as the same
// characters; other identifiers, or bytes the declared set does not
// explain, end the stream. One stream may hold several interchanges, each
// UNB … UNZ with many UNH … UNT messages. UNT's segment
// count and reference are checked (a mismatch refuses the message), UNZ's
// message count and reference too (a mismatch is a *SyntaxError after the
// messages were returned). A split message (UNH DE0068 common access
// reference with S010 "1:C", "2", …, "n:F") is joined: the parts continue
// one message, a part may repeat the header (it must agree), and a missing,
// reordered or orphaned part refuses the message by its DE0068.
//
// Memory is bounded by one message: a segment longer than
// Options.MaxSegmentBytes ends the stream, a message with more than
// Options.MaxMessageSegments segments is refused and skipped without being
// held.
//
// # What is read
//
// The Prüfidentifikator (RFF+Z13) says what the values are
// (domain-rules.md §9):
//
//	13025 Lastgang Marktlokation/Tranche  STROM  intervals
//	13018 Lastgang Messlokation           STROM  intervals
//	13008 Lastgang Gas                    GAS    intervals
//	13019 Energiemenge Strom              STROM  intervals
//	13009 Energiemenge Gas                GAS    intervals
//	13017 Zählerstand Strom               STROM  readings (DTM+7)
//	13002 Zählerstand Gas                 GAS    readings (DTM+7)
//
// Anything else is refused naming the Prüfidentifikator and, when the
// message names one, the product code — 13022 Ausfallarbeit with
// PIA+5+AUA:Z08 is lost energy the operator computed, not a reading
// (ErrNotReading). A Storno (BGM DE1225 = 1) is refused naming the
// cancelled document (RFF+ACW): the store never deletes, so the sender
// delivers the corrected values at a higher version instead (ErrStorno).
//
// Segments that neither identify nor change a value (CTA, COM, CUX, FTX,
// RFF other than Z13 and ACW, CCI, MEA, DTM+9 and the period sent) are
// skipped; an unknown segment refuses the message.
//
// Identifiers are parsed with package metering: LOC+172 is a MaLo-ID
// (11 digits, check digit) or a MeLo-ID (33 characters), resolved to its
// MaLo by Options.MaloOf; an empty LOC+172, another qualifier (LOC+237, a
// balancing area) or any other identifier is refused. NAD+MS is the sender
// and the operator of the version scope; it must pass the BDEW or GS1
// check. PIA+5 with type SRW or Z02 is the OBIS code, canonicalised; its
// medium (A) must be the Prüfidentifikator's Sparte (1 electricity, 7 gas).
// The unit is QTY's (KWH, MTQ = m³) and must suit the Sparte; an
// electricity value without one is kWh, a gas value without one is refused
// (m³ or kWh cannot be told).
//
// # Values
//
// QTY's qualifier is the quality (DE 6063; BO4E Messwertstatus,
// domain-rules.md §6):
//
//	220  Wahrer Wert               MEASURED
//	67   Ersatzwert                SUBSTITUTED
//	187  Prognosewert              ESTIMATED
//	Z18  Vorläufiger Wert          PRELIMINARY
//	20   Nicht verwendbarer Wert   FAULTY
//
// Any other qualifier (201 Vorschlagswert, 79 Summenwert, Z30 Fehlender
// Wert, …) refuses the message. A Lastgang (13025, 13018, 13008) lies on
// one grid — a fixed step of whole minutes dividing an hour, or an hour,
// aligned to it — which its deliveries declare as Resolution; an interval
// off the grid (a 16-minute quarter hour after a clock glitch) refuses the
// message. Energiemengen may span days or months and declare none. The value is read exactly with the
// interchange's decimal mark (never the other one, never a thousands
// separator) and must fit decimal(18,6): more digits are refused, not
// rounded. DTM+163/164 (intervals) and DTM+7 (readings) in format 303 or
// 304 become UTC instants by their offset ("?+01", "?+02"); a format
// without an offset is refused. STS details (Z32 Ersatzwertbildungs-
// verfahren, Z34 Korrekturgrund, Z40 …) go into the delivery's provenance
// as MSCONS_STATUS events, one per run of consecutive values with the same
// details; they do not change the quality.
//
// # Deliveries and versions
//
// A message yields one delivery per location, OBIS channel and
// Bilanzierungsmonat of the values (a version scope holds one operator and
// one month), each passing metering.Delivery.Validate. Source is
// SourceMscons(sender, BGM document number); provenance starts with an
// INGESTED event at Options.Now.
//
// The version is DTM+293 (format 304, in the header or after LOC+172), as
// the CCYYMMDDHHMMSS digits of its UTC instant; a DTM+293 anywhere else
// refuses the message rather than being skipped, and so does a second one
// in the header or in one location group, or a split message's part
// repeating the header with another: which label the values carry is never
// guessed. A location group's own label holds over the header's. A message
// without one gets
// metering.VersionArrival of its document date (DTM+137): Unix
// milliseconds, 13 digits. So of two deliveries of the same interval from
// the same operator without labels, the one with the later document date
// wins, a re-read of the same file yields the same version (a duplicate,
// not a new version), and a derived version never compares above a real
// 14-digit MSCONS label in one scope — a label always wins over a derived
// version, whichever arrived later. A message with neither is refused.
//
// # Writing
//
// Write is the inverse for generated data: deliveries to an interchange the
// reader reads back, for round-trip tests, property tests and benchmarks;
// Writer does the same a message at a time, for inputs larger than memory.
package mscons
