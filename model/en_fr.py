"""The English->French mini-language: its lexicon, its grammar and a random sentence generator (no downloads).

The French is correct for the fragment it covers: subject pronouns with conjugated present-tense
verbs (être, avoir, regular -er verbs), gender and number agreement of articles and adjectives,
colour adjectives after the noun and petit/grand/bon/jeune/joli before it, ne ... pas (with
pas de/d' for indefinite objects), elision (j', l', n', d', qu'), de + le -> du, and plurals.
Datasets of it (splits, vocabularies) are model/data.py's make_en_fr.
"""
from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Noun:
    en: str
    en_pl: str
    fr: str
    fr_pl: str
    feminine: bool


def noun_entry(en: str, fr: str, gender: str, en_pl: str | None = None, fr_pl: str | None = None) -> Noun:
    """A noun with regular plurals (+s) unless given; gender 'm' or 'f' (French)."""
    return Noun(en, en_pl or en + "s", fr, fr_pl or fr + "s", gender == "f")


NOUNS = [
    noun_entry("cat", "chat", "m"), noun_entry("dog", "chien", "m"), noun_entry("car", "voiture", "f"),
    noun_entry("house", "maison", "f"), noun_entry("book", "livre", "m"), noun_entry("apple", "pomme", "f"),
    noun_entry("table", "table", "f"), noun_entry("tree", "arbre", "m"),
    noun_entry("bird", "oiseau", "m", fr_pl="oiseaux"), noun_entry("child", "enfant", "m", en_pl="children"),
    noun_entry("man", "homme", "m", en_pl="men"), noun_entry("woman", "femme", "f", en_pl="women"),
    noun_entry("boy", "garçon", "m"), noun_entry("girl", "fille", "f"), noun_entry("friend", "ami", "m"),
    noun_entry("letter", "lettre", "f"), noun_entry("flower", "fleur", "f"), noun_entry("door", "porte", "f"),
    noun_entry("window", "fenêtre", "f"), noun_entry("city", "ville", "f", en_pl="cities"),
    noun_entry("garden", "jardin", "m"), noun_entry("school", "école", "f"), noun_entry("bread", "pain", "m"),
    noun_entry("cake", "gâteau", "m", fr_pl="gâteaux"), noun_entry("song", "chanson", "f"),
    noun_entry("film", "film", "m"), noun_entry("picture", "image", "f"),
    noun_entry("horse", "cheval", "m", fr_pl="chevaux"), noun_entry("newspaper", "journal", "m", fr_pl="journaux"),
    noun_entry("chair", "chaise", "f"), noun_entry("bag", "sac", "m"), noun_entry("key", "clé", "f"),
    noun_entry("bike", "vélo", "m"), noun_entry("hat", "chapeau", "m", fr_pl="chapeaux"),
    noun_entry("shirt", "chemise", "f"), noun_entry("shoe", "chaussure", "f"), noun_entry("phone", "téléphone", "m"),
    noun_entry("computer", "ordinateur", "m"), noun_entry("box", "boîte", "f", en_pl="boxes"),
    noun_entry("ball", "balle", "f"), noun_entry("river", "rivière", "f"), noun_entry("mountain", "montagne", "f"),
    noun_entry("street", "rue", "f"), noun_entry("boat", "bateau", "m", fr_pl="bateaux"),
    noun_entry("train", "train", "m"), noun_entry("plane", "avion", "m"), noun_entry("cup", "tasse", "f"),
    noun_entry("glass", "verre", "m", en_pl="glasses"), noun_entry("bottle", "bouteille", "f"),
    noun_entry("pen", "stylo", "m"), noun_entry("map", "carte", "f"), noun_entry("lamp", "lampe", "f"),
    noun_entry("bed", "lit", "m"), noun_entry("mouse", "souris", "f", en_pl="mice", fr_pl="souris"),
    noun_entry("fish", "poisson", "m", en_pl="fish"), noun_entry("cow", "vache", "f"),
    noun_entry("duck", "canard", "m"), noun_entry("rabbit", "lapin", "m"), noun_entry("shop", "magasin", "m"),
    noun_entry("room", "chambre", "f"), noun_entry("kitchen", "cuisine", "f"), noun_entry("egg", "œuf", "m"),
    noun_entry("cheese", "fromage", "m"),
]

# English, masculine, feminine, masculine plural, feminine plural
COLOURS = [("red", "rouge", "rouge", "rouges", "rouges"), ("black", "noir", "noire", "noirs", "noires"),
           ("white", "blanc", "blanche", "blancs", "blanches"), ("green", "vert", "verte", "verts", "vertes"),
           ("blue", "bleu", "bleue", "bleus", "bleues"), ("yellow", "jaune", "jaune", "jaunes", "jaunes"),
           ("grey", "gris", "grise", "gris", "grises")]
PRE_ADJECTIVES = [("small", "petit", "petite", "petits", "petites"), ("big", "grand", "grande", "grands", "grandes"),
                  ("good", "bon", "bonne", "bons", "bonnes"), ("young", "jeune", "jeune", "jeunes", "jeunes"),
                  ("pretty", "joli", "jolie", "jolis", "jolies")]
PREDICATE_ADJECTIVES = COLOURS + PRE_ADJECTIVES + [
    ("happy", "heureux", "heureuse", "heureux", "heureuses"), ("tired", "fatigué", "fatiguée", "fatigués", "fatiguées"),
    ("sad", "triste", "triste", "tristes", "tristes"), ("ready", "prêt", "prête", "prêts", "prêtes"),
    ("busy", "occupé", "occupée", "occupés", "occupées"), ("sick", "malade", "malade", "malades", "malades"),
    ("late", "en retard", "en retard", "en retard", "en retard"), ("rich", "riche", "riche", "riches", "riches"),
    ("strong", "fort", "forte", "forts", "fortes"), ("calm", "calme", "calme", "calmes", "calmes")]
# English singular, English plural, French masculine, feminine (+s for plural)
PROFESSIONS = [("student", "students", "étudiant", "étudiante"), ("teacher", "teachers", "professeur", "professeure"),
               ("doctor", "doctors", "médecin", "médecin"), ("singer", "singers", "chanteur", "chanteuse"),
               ("nurse", "nurses", "infirmier", "infirmière"), ("lawyer", "lawyers", "avocat", "avocate"),
               ("engineer", "engineers", "ingénieur", "ingénieure"), ("cook", "cooks", "cuisinier", "cuisinière"),
               ("baker", "bakers", "boulanger", "boulangère"), ("writer", "writers", "écrivain", "écrivaine")]
# English (words of the base form, 3rd singular), French infinitive; all regular -er verbs
VERBS = [(("like",), ("likes",), "aimer"), (("love",), ("loves",), "adorer"), (("watch",), ("watches",), "regarder"),
         (("eat",), ("eats",), "manger"), (("find",), ("finds",), "trouver"), (("carry",), ("carries",), "porter"),
         (("wash",), ("washes",), "laver"), (("visit",), ("visits",), "visiter"), (("draw",), ("draws",), "dessiner"),
         (("prepare",), ("prepares",), "préparer"), (("close",), ("closes",), "fermer"),
         (("borrow",), ("borrows",), "emprunter"), (("bring",), ("brings",), "apporter"),
         (("keep",), ("keeps",), "garder"), (("push",), ("pushes",), "pousser"), (("hate",), ("hates",), "détester"),
         (("look", "for"), ("looks", "for"), "chercher"), (("listen", "to"), ("listens", "to"), "écouter")]
# person: English, French, person index (0 je .. 5 ils), feminine, plural
PRONOUNS = [("i", "je", 0, False, False), ("you", "tu", 1, False, False), ("he", "il", 2, False, False),
            ("she", "elle", 2, True, False), ("we", "nous", 3, False, True), ("they", "ils", 5, False, True)]
ETRE = ["suis", "es", "est", "sommes", "êtes", "sont"]
AVOIR = ["ai", "as", "a", "avons", "avez", "ont"]
EN_BE = {0: "am", 1: "are", 2: "is", 3: "are", 4: "are", 5: "are"}
PREPOSITIONS = [("in", "dans"), ("on", "sur"), ("with", "avec"), ("under", "sous"), ("behind", "derrière"),
                ("near", "près de")]
CONJUNCTIONS = [("and", ["et"]), ("but", ["mais"]), ("because", ["parce", "que"]), ("so", ["donc"])]
H_MUET = {"homme", "hommes", "heureux", "heureuse", "heureuses"}
VOWELS = set("aeiouyéèêàâîôûœ")


def _conjugate(infinitive: str, person: int) -> str:
    stem = infinitive[:-2]
    if person == 3 and stem.endswith("g"):
        return stem + "eons"  # nous mangeons
    return stem + ["e", "es", "e", "ons", "ez", "ent"][person]


def _starts_with_vowel(word: str) -> bool:
    return word in H_MUET or (word[:1] in VOWELS)


def french_surface(tokens: list[str]) -> list[str]:
    """Apply elision (je->j', le/la->l', ne->n', de->d', que->qu', ce->cet, ma->mon) and de+le->du, de+les->des."""
    out = []
    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if _starts_with_vowel(nxt):
            tok = {"je": "j'", "le": "l'", "la": "l'", "ne": "n'", "de": "d'", "que": "qu'", "ce": "cet",
                   "ma": "mon", "ta": "ton"}.get(tok, tok)
        out.append(tok)
    merged: list[str] = []
    for tok in out:
        if merged and merged[-1] == "de" and tok in ("le", "les"):
            merged[-1] = "du" if tok == "le" else "des"
        else:
            merged.append(tok)
    return merged


@dataclass
class NounPhrase:
    """A generated noun phrase in both languages, with what agreement needs (gender, number)."""

    en: list[str]
    fr: list[str]
    feminine: bool
    plural: bool
    indefinite: bool = False


def _noun_phrase(rng: random.Random, allow_relative: bool, depth: int = 0) -> NounPhrase:
    noun = rng.choice(NOUNS)
    plural = rng.random() < 0.3
    det = rng.choice(["the", "a", "my", "your", "this"])
    if plural and det == "a":
        det = "some"
    pre = rng.choice(PRE_ADJECTIVES) if rng.random() < 0.25 else None
    colour = rng.choice(COLOURS) if rng.random() < 0.3 else None
    form = (1 if not noun.feminine else 2) + (2 if plural else 0)  # index into adjective tuples
    fr_det = {
        ("the", False): "la" if noun.feminine else "le", ("the", True): "les",
        ("a", False): "une" if noun.feminine else "un", ("some", True): "des",
        ("my", False): "ma" if noun.feminine else "mon", ("my", True): "mes",
        ("your", False): "ta" if noun.feminine else "ton", ("your", True): "tes",
        ("this", False): "cette" if noun.feminine else "ce", ("this", True): "ces",
    }[(det if det != "this" or not plural else "this", plural)]
    en_det = {"this": "these" if plural else "this"}.get(det, det)
    if det == "some" and pre is not None:
        fr_det = "de"  # des + adjective before the noun -> de (de petits chats)
    en = ([en_det] if en_det != "some" or rng.random() < 1.0 else []) + ([pre[0]] if pre else []) + \
         ([colour[0]] if colour else []) + [noun.en_pl if plural else noun.en]
    fr = [fr_det] + ([pre[form]] if pre else []) + [noun.fr_pl if plural else noun.fr] + \
         ([colour[form]] if colour else [])
    np_ = NounPhrase(en, fr, noun.feminine, plural, indefinite=det in ("a", "some"))
    if allow_relative and depth == 0 and rng.random() < 0.2:
        verb_en, verb_fr, obj = _verb_phrase(rng, 5 if plural else 2, negated=False)
        np_.en += ["that"] + verb_en + obj.en
        np_.fr += ["qui"] + verb_fr + obj.fr
    return np_


def _verb_phrase(rng: random.Random, person: int, negated: bool):
    base, third, infinitive = rng.choice(VERBS)
    obj = _noun_phrase(rng, allow_relative=False, depth=1)
    en = list(third if person == 2 else base)
    fr = [_conjugate(infinitive, person)]
    if negated:
        en = ["does" if person == 2 else "do", "not"] + list(base)
        fr = ["ne"] + fr + ["pas"]
        if obj.indefinite:
            obj.fr[0] = "de"  # pas de / pas d'
    return en, fr, obj


def _subject(rng: random.Random):
    """English tokens, French tokens, person index, feminine, plural."""
    if rng.random() < 0.55:
        en, fr, person, fem, plural = rng.choice(PRONOUNS)
        return [en], [fr], person, fem, plural
    np_ = _noun_phrase(rng, allow_relative=True)
    return np_.en, np_.fr, (5 if np_.plural else 2), np_.feminine, np_.plural


def _clause(rng: random.Random) -> tuple[list[str], list[str]]:
    s_en, s_fr, person, fem, plural = _subject(rng)
    negated = rng.random() < 0.25
    kind = rng.random()
    if kind < 0.3:  # être + profession or adjective
        en_be = EN_BE[person]
        be_en, be_fr = ([en_be, "not"], ["ne", ETRE[person], "pas"]) if negated else ([en_be], [ETRE[person]])
        if rng.random() < 0.5 and s_en[0] in ("i", "you", "he", "she", "we", "they"):
            sg, pl, masc, femi = rng.choice(PROFESSIONS)
            word = (femi if fem else masc) + ("s" if plural and not (femi if fem else masc).endswith("s") else "")
            pred_en = [pl] if plural else ["a", sg]
            return s_en + be_en + pred_en, s_fr + be_fr + [word]
        adj = rng.choice(PREDICATE_ADJECTIVES)
        form = (2 if fem else 1) + (2 if plural else 0)
        return s_en + be_en + [adj[0]], s_fr + be_fr + adj[form].split()
    if kind < 0.45:  # avoir
        obj = _noun_phrase(rng, allow_relative=True)
        if negated:
            if obj.indefinite:
                obj.fr[0] = "de"
            return (s_en + ["does" if person == 2 else "do", "not", "have"] + obj.en,
                    s_fr + ["ne", AVOIR[person], "pas"] + obj.fr)
        return s_en + ["has" if person == 2 else "have"] + obj.en, s_fr + [AVOIR[person]] + obj.fr
    verb_en, verb_fr, obj = _verb_phrase(rng, person, negated)
    en, fr = s_en + verb_en + obj.en, s_fr + verb_fr + obj.fr
    if rng.random() < 0.25:
        prep_en, prep_fr = rng.choice(PREPOSITIONS)
        place = _noun_phrase(rng, allow_relative=False, depth=1)
        en, fr = en + [prep_en] + place.en, fr + prep_fr.split() + place.fr
    return en, fr


def random_sentence(rng: random.Random, clauses: int) -> tuple[list[str], list[str]]:
    """One random (English, French) pair of token lists: `clauses` clauses joined by conjunctions."""
    en, fr = _clause(rng)
    for _ in range(clauses - 1):
        conj_en, conj_fr = rng.choice(CONJUNCTIONS)
        c_en, c_fr = _clause(rng)
        en, fr = en + [conj_en] + c_en, fr + conj_fr + c_fr
    return en, french_surface(fr)


# Fixed sentences from the source notes that must be in the language.
CANONICAL = [("i am a student", "je suis étudiant"), ("she is a student", "elle est étudiante"),
             ("we are students", "nous sommes étudiants"), ("i am not a student", "je ne suis pas étudiant"),
             ("i have a cat", "j' ai un chat"), ("i do not have a cat", "je n' ai pas de chat")]


def random_pairs(rng: random.Random, count: int, clause_weights=(0.55, 0.3, 0.15)) -> list:
    """count random (English, French) token-list pairs of 1, 2 or 3 clauses, drawn with clause_weights."""
    pairs = []
    for _ in range(count):
        clauses = rng.choices((1, 2, 3), weights=clause_weights)[0]
        pairs.append(random_sentence(rng, clauses))
    return pairs


def english_lexicon() -> list[str]:
    """Every English word type the grammar can produce."""
    words = {w for n in NOUNS for w in (n.en, n.en_pl)}
    words |= {a[0] for a in PREDICATE_ADJECTIVES} | {w for p in PROFESSIONS for w in p[:2]}
    words |= {w for v in VERBS for w in v[0] + v[1]} | {p[0] for p in PRONOUNS} | set(EN_BE.values())
    words |= {p[0] for p in PREPOSITIONS} | {c[0] for c in CONJUNCTIONS}
    words |= {"the", "a", "my", "your", "this", "these", "some", "that", "not", "do", "does", "have", "has"}
    return sorted(words)


PARTS_OF_SPEECH = ("nouns", "verbs", "adjectives", "pronouns", "determiners", "linking")  # ids; the UI names them


def english_parts_of_speech() -> dict[str, list[str]]:
    """english_lexicon() grouped by part of speech, from the grammar's own word lists (PARTS_OF_SPEECH order).

    Verbs include the forms of "be", "do" and "have"; "linking" words are prepositions, conjunctions and "not".
    """
    groups = {
        "nouns": {w for n in NOUNS for w in (n.en, n.en_pl)} | {w for p in PROFESSIONS for w in p[:2]},
        "verbs": {w for v in VERBS for w in v[0] + v[1]} | set(EN_BE.values()) | {"do", "does", "have", "has"},
        "adjectives": {a[0] for a in PREDICATE_ADJECTIVES},
        "pronouns": {p[0] for p in PRONOUNS},
        "determiners": {"the", "a", "my", "your", "this", "these", "some", "that"},
        "linking": {p[0] for p in PREPOSITIONS} | {c[0] for c in CONJUNCTIONS} | {"not"},
    }
    return {part: sorted(groups[part]) for part in PARTS_OF_SPEECH}
